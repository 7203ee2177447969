package main

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/switchboard-voice/switchboard/featureserver"
)

func newSecretsCmd(c *cli) *cobra.Command {
	cmd := groupCommand("secrets", "Manage how the node's database keeps its secrets")
	var (
		databaseURL string
		asJSON      bool
	)
	rotate := &cobra.Command{
		Use:   "rotate",
		Short: "Encrypt every stored secret again under the first key of SWITCHBOARD_SECRETS_KEY",
		Long: `Rotate encrypts every secret the node's database keeps (account webhook secrets,
endpoint signing keys, hook passwords) again under the first key of
SWITCHBOARD_SECRETS_KEY, reading each with any key listed; secrets stored in clear
before a key was set are encrypted too. To change the key: put the new key first and
the old one after it (SWITCHBOARD_SECRETS_KEY=NEW,OLD), restart the nodes with it,
run this, then drop the old key. On SQLite stop the node first (it holds the file's
lock); on PostgreSQL nodes may keep running.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v := databaseURL
			if v == "" {
				v = c.getenv(featureserver.EnvDatabaseURL)
			}
			if v == "" {
				v = featureserver.DefaultDatabaseURL
			}
			rep, err := featureserver.RotateSecrets(cmd.Context(), v, c.getenv(featureserver.EnvSecretsKey))
			var bad *featureserver.ConfigError
			switch {
			case errors.As(err, &bad), errors.Is(err, featureserver.ErrNoSecretsKey):
				return usageError("secrets rotate: %v", err)
			case err != nil:
				return failure(fmt.Errorf("secrets rotate: %w", err))
			}
			if asJSON {
				return json.NewEncoder(c.stdout).Encode(rep)
			}
			fmt.Fprintf(c.stdout, "%s: %d node secret(s) and the keys of %d endpoint(s) encrypted under the first of %d key(s)\n",
				rep.Database, rep.NodeValues, rep.Endpoints, rep.Keys)
			if rep.Keys > 1 {
				fmt.Fprintf(c.stdout, "the keys after the first are no longer needed: drop them from %s\n", featureserver.EnvSecretsKey)
			}
			return nil
		},
	}
	rotate.Flags().StringVar(&databaseURL, "database-url", "", "sqlite:PATH or postgres://... (default SWITCHBOARD_DATABASE_URL, else sqlite:switchboard.db)")
	rotate.Flags().BoolVar(&asJSON, "json", false, "print one JSON object")
	cmd.AddCommand(rotate)
	return cmd
}
