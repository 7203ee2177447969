package main

import (
	"context"
	"encoding/json"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/switchboard-voice/switchboard/featureserver"
	"github.com/switchboard-voice/switchboard/internal/dburl"
)

func newMigrateCmd(c *cli) *cobra.Command {
	cmd := groupCommand("migrate", "Show or apply the schema migrations of a database")
	var (
		databaseURL string
		asJSON      bool
	)
	cmd.PersistentFlags().StringVar(&databaseURL, "database-url", "", "sqlite:PATH or postgres://... (default SWITCHBOARD_DATABASE_URL, else sqlite:switchboard.db)")
	cmd.PersistentFlags().BoolVar(&asJSON, "json", false, "print one JSON object")
	target := func() (dburl.Location, error) {
		v := databaseURL
		if v == "" {
			v = c.getenv("SWITCHBOARD_DATABASE_URL")
		}
		if v == "" {
			v = "sqlite:switchboard.db"
		}
		loc, err := dburl.Parse(v)
		if err != nil {
			return loc, usageError("migrate: %v", err)
		}
		return loc, nil
	}
	// migrateTarget runs migrate on the target database, applying what it lacks or not.
	migrateTarget := func(apply bool) func(*cobra.Command, []string) error {
		return func(cmd *cobra.Command, _ []string) error {
			loc, err := target()
			if err != nil {
				return err
			}
			return runMigrate(cmd.Context(), c, loc, apply, asJSON)
		}
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "status",
		Short: "List every migration and whether the database has it (reads only)",
		Args:  cobra.NoArgs,
		RunE:  migrateTarget(false),
	}, &cobra.Command{
		Use:   "up",
		Short: "Apply the migrations the database lacks (safe while nodes run or start)",
		Long: `Up applies, in order and each in its own transaction, the migrations the
database does not have. On PostgreSQL it holds an advisory lock meanwhile, so nodes
starting at the same time (which migrate at start) wait and then find nothing to do.`,
		Args: cobra.NoArgs,
		RunE: migrateTarget(true),
	})
	return cmd
}

func runMigrate(ctx context.Context, c *cli, loc dburl.Location, up, asJSON bool) error {
	out, err := featureserver.Migrate(ctx, loc, up)
	if err != nil {
		return failure(fmt.Errorf("migrate: %w", err))
	}
	if asJSON {
		return json.NewEncoder(c.stdout).Encode(out)
	}
	fmt.Fprintf(c.stdout, "%s\n", out.Database)
	w := tabwriter.NewWriter(c.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "  RECORD\tVERSION\tNAME\tAPPLIED")
	pending := 0
	for _, m := range out.Migrations {
		state := "pending"
		if m.AppliedAt != nil {
			state = m.AppliedAt.Format(time.RFC3339)
		} else {
			pending++
		}
		fmt.Fprintf(w, "  %s\t%d\t%s\t%s\n", m.Line, m.Version, m.Name, state)
	}
	_ = w.Flush()
	switch {
	case up:
		fmt.Fprintf(c.stdout, "applied %d migration(s)\n", len(out.Applied))
	case pending > 0:
		fmt.Fprintf(c.stdout, "%d pending: run `switchboard migrate up` (nodes also migrate at start)\n", pending)
	}
	return nil
}
