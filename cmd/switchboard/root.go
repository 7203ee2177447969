package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"
	"golang.org/x/term"
)

func newRootCmd(c *cli) *cobra.Command {
	var logLevel string
	root := &cobra.Command{
		Use:           "switchboard",
		Short:         "Call control and webhook delivery for jambonz-style voice applications",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       versionLine(),
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			level, err := parseLogLevel(logLevel, c.getenv("SWITCHBOARD_LOG_LEVEL"))
			if err != nil {
				return usageError("%v", err)
			}
			c.logger = newLogger(c.stderr, level)
			return nil
		},
	}
	root.PersistentFlags().StringVar(&logLevel, "log-level", "", "log level: trace, debug, info, warn, error (default SWITCHBOARD_LOG_LEVEL, else warn; info for serve)")
	root.SetVersionTemplate("{{.Version}}\n") // --version prints what `version` does
	// Every command, built here and nowhere else: the list of what the binary does.
	root.AddCommand(
		newServeCmd(c),
		newSimulateCmd(c),
		newTestCmd(c),
		newDemoCmd(c),
		newWebhooksCmd(c),
		newVerifyCmd(c),
		newFragmentCmd(c),
		newBenchCmd(c),
		newMigrateCmd(c),
		newSecretsCmd(c),
		newVersionCmd(c),
	)
	return root
}

// logTimeFormat is RFC 3339 in UTC-offset form with milliseconds, always three
// digits so that lines sort and align.
const logTimeFormat = "2006-01-02T15:04:05.000Z07:00"

// setLogTimeFormat gives log lines millisecond timestamps: a call's hooks and retries
// are milliseconds apart. zerolog reads the format on every line, so it is set once,
// before any logger runs (main, and the tests' TestMain).
func setLogTimeFormat() { zerolog.TimeFieldFormat = logTimeFormat }

// newLogger is the process's one logger, passed down. Logs go to stderr so that stdout
// stays machine-readable: human-friendly on a terminal, JSON lines otherwise (what log
// collectors want from a server).
func newLogger(w io.Writer, level zerolog.Level) zerolog.Logger {
	if isTerminal(w) {
		w = zerolog.ConsoleWriter{Out: w, TimeFormat: "15:04:05.000"}
	}
	return zerolog.New(w).Level(level).With().Timestamp().Logger()
}

func parseLogLevel(flagValue, envValue string) (zerolog.Level, error) {
	v, source := flagValue, "--log-level"
	if v == "" {
		v, source = envValue, "SWITCHBOARD_LOG_LEVEL"
	}
	if v == "" {
		return zerolog.WarnLevel, nil
	}
	level, err := zerolog.ParseLevel(strings.ToLower(v))
	if err != nil || level == zerolog.NoLevel {
		return 0, fmt.Errorf("%s=%q: want trace, debug, info, warn, error or disabled", source, v)
	}
	return level, nil
}

// isTerminal reports whether w is a terminal (colours, progress bars).
func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// groupCommand is a command that only holds subcommands: run alone it prints its
// help; with an unknown subcommand it is a usage error (exit 2), where cobra would
// print the help and exit 0.
func groupCommand(use, short string) *cobra.Command {
	return &cobra.Command{
		Use: use, Short: short,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
}
