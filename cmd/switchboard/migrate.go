package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"text/tabwriter"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
	"github.com/spf13/cobra"

	"github.com/switchboard-voice/switchboard/internal/dburl"
	"github.com/switchboard-voice/switchboard/internal/migrate"
	"github.com/switchboard-voice/switchboard/internal/nodestore/pgnode"
	"github.com/switchboard-voice/switchboard/internal/nodestore/sqlitenode"
	"github.com/switchboard-voice/switchboard/outbox/pgstore"
	"github.com/switchboard-voice/switchboard/outbox/sqlitestore"
)

func init() { extraCommands = append(extraCommands, newMigrateCmd) }

// migrateJSON is the --json output of `migrate status` and `migrate up`.
type migrateJSON struct {
	Database   string              `json:"database"`
	Migrations []migrationJSONLine `json:"migrations"`
	// Applied is what `up` applied (versions), empty for `status`.
	Applied []int64 `json:"applied"`
}

type migrationJSONLine struct {
	Line      string     `json:"line"`
	Version   int64      `json:"version"`
	Name      string     `json:"name"`
	Applied   bool       `json:"applied"`
	AppliedAt *time.Time `json:"applied_at"`
}

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

// migrationLine is one line of migrations of a node's database, with what must run
// before Up applies it.
type migrationLine struct {
	migrate.Line
	// prepare, when set, runs before Up (the node's SQLite store carries over the
	// record of its runner before goose).
	prepare func(context.Context, *sql.DB) error
}

// migrationLines are the migrations a node's database holds, per driver: the
// outbox's and the node store's.
func migrationLines(driver string) (migrate.Dialect, []migrationLine) {
	if driver == dburl.Postgres {
		return migrate.Postgres, []migrationLine{
			{Line: migrate.Line{Table: pgstore.MigrationTable, FS: pgstore.Migrations()}},
			{Line: migrate.Line{Table: pgnode.MigrationTable, FS: pgnode.Migrations()}},
		}
	}
	return migrate.SQLite, []migrationLine{
		{Line: migrate.Line{Table: sqlitestore.MigrationTable, FS: sqlitestore.Migrations()}},
		{Line: migrate.Line{Table: sqlitenode.MigrationTable, FS: sqlitenode.Migrations()}, prepare: sqlitenode.AdoptLegacyRecord},
	}
}

// openMigrationDB opens loc for migrating: for SQLite with the stores' write lock at
// BEGIN and busy timeout, so that it waits for a node writing the file.
func openMigrationDB(loc dburl.Location, create bool) (*sql.DB, string, error) {
	if loc.Driver == dburl.Postgres {
		db, err := sql.Open("pgx", loc.URL)
		return db, "postgres", err
	}
	if !create {
		if _, err := os.Stat(loc.Path); err != nil {
			return nil, "", fmt.Errorf("no SQLite database at %s: %w", loc.Path, err)
		}
	}
	db, err := sql.Open("sqlite", "file:"+loc.Path+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_txlock=immediate")
	return db, "sqlite:" + loc.Path, err
}

func runMigrate(ctx context.Context, c *cli, loc dburl.Location, up, asJSON bool) error {
	db, name, err := openMigrationDB(loc, up)
	if err != nil {
		return failure(fmt.Errorf("migrate: %w", err))
	}
	defer db.Close()
	if err := db.PingContext(ctx); err != nil {
		return failure(fmt.Errorf("migrate: %s: %w", name, err))
	}
	dialect, lines := migrationLines(loc.Driver)
	out := migrateJSON{Database: name, Migrations: []migrationJSONLine{}, Applied: []int64{}}
	for _, line := range lines {
		if up {
			if line.prepare != nil {
				if err := line.prepare(ctx, db); err != nil {
					return failure(fmt.Errorf("migrate %s: %w", line.Table, err))
				}
			}
			applied, err := migrate.Up(ctx, db, dialect, line.Line)
			if err != nil {
				return failure(err)
			}
			for _, a := range applied {
				out.Applied = append(out.Applied, a.Version)
			}
		}
		versions, err := migrate.List(ctx, db, dialect, line.Line)
		if err != nil {
			return failure(err)
		}
		for _, v := range versions {
			m := migrationJSONLine{Line: line.Table, Version: v.Version, Name: v.Name, Applied: v.Applied}
			if v.Applied {
				at := v.AppliedAt
				m.AppliedAt = &at
			}
			out.Migrations = append(out.Migrations, m)
		}
	}
	if asJSON {
		return json.NewEncoder(c.stdout).Encode(out)
	}
	fmt.Fprintf(c.stdout, "%s\n", name)
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
