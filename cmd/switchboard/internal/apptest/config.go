package apptest

import (
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/switchboard-voice/switchboard/callctl"
	"github.com/switchboard-voice/switchboard/callctl/scenario"
)

// Config is one run of `switchboard test`. Its defaults are stated on the fields
// and applied by WithDefaults.
type Config struct {
	// Paths are the scenario directories (each one's *.yaml and *.yml) and files.
	// Default: ./scenarios.
	Paths []string
	// App, when set, points every scenario elsewhere: a URL with only a scheme and
	// a host moves each scenario's app there, keeping its path, retry fragment and
	// transport; a URL with more replaces it.
	App string
	// Run selects the scenarios whose name (FILE, or FILE/CASE) matches it.
	Run string
	// Parallel is how many calls run at once. Default 4.
	Parallel int
	// Count is how many times each scenario runs. Default 1.
	Count int
	// PassRate, when set (0 < PassRate <= 1, with Count >= 2), passes a scenario
	// when at least that share of its runs pass; otherwise every run must pass.
	PassRate float64
	// FailFast starts no scenario once one has failed.
	FailFast bool
	// List prints the scenarios selected and runs nothing.
	List bool
	// Verbose prints each scenario's timeline and logs, not only those of failures.
	Verbose bool
	// JSON prints JSON events, one per line, instead of text.
	JSON bool
	// JUnit, when set, is the file the JUnit XML report is written to.
	JUnit string
	// Update records each scenario's call as its snapshot instead of comparing it.
	Update bool
	// Strict fails a scenario on a compat warning its expect.compat does not name
	// (docs/compatibility.md §2).
	Strict bool
	// LogFile, when set, receives every log line (JSON) and the output of the
	// applications started; otherwise they are shown only with Verbose.
	LogFile string
	// Start, when set, is the shell command that starts the application under test
	// (for every scenario; it overrides the folders' start:).
	Start string
	// NoStart leaves the folders' start: unused: the applications already run.
	NoStart bool
	// StartTimeout bounds the wait for a started application to accept
	// connections. Default 1m.
	StartTimeout time.Duration
	// Watch runs the scenarios again whenever their files or their application's
	// files change, until the context ends.
	Watch bool
	// Timeout is the real-time limit of each call. Default 1m.
	Timeout time.Duration

	// CallOptions returns the Options of a call to appURL: the network's clients
	// and settings, credentials, the idle limit, the clock. The scenario adds its
	// own (script, status hook, caller numbers) and the run its logger.
	CallOptions func(appURL string) callctl.Options
	// HandshakeTimeoutGiven says the calls' WebSocket handshake timeout was given
	// for the run (a flag or JAMBONES_WS_HANDSHAKE_TIMEOUT_MS): a folder's
	// ws_handshake_timeout does not replace it, as --start wins over start:.
	HandshakeTimeoutGiven bool
	// LookupEnv resolves ${VAR} references in scenario and folder files. Nil reads
	// none.
	LookupEnv func(string) (string, bool)
	// LogLevel is the level of the calls' logs. Default (the zero value): debug.
	LogLevel zerolog.Level
	// Stdout receives the report, Stderr what is about the run (the started
	// applications' output with Verbose, the reason a run stopped).
	Stdout, Stderr io.Writer
}

// The defaults of Config.
const (
	DefaultDir          = "scenarios"
	defaultParallel     = 4
	defaultStartTimeout = time.Minute
	defaultTimeout      = time.Minute
)

// WithDefaults returns c with every unset field at its default.
func (c Config) WithDefaults() Config {
	if len(c.Paths) == 0 {
		c.Paths = []string{DefaultDir}
	}
	if c.Parallel == 0 {
		c.Parallel = defaultParallel
	}
	if c.Count == 0 {
		c.Count = 1
	}
	if c.StartTimeout == 0 {
		c.StartTimeout = defaultStartTimeout
	}
	if c.Timeout == 0 {
		c.Timeout = defaultTimeout
	}
	if c.Stdout == nil {
		c.Stdout = io.Discard
	}
	if c.Stderr == nil {
		c.Stderr = io.Discard
	}
	return c
}

// ErrUsage is what every error of bad usage or a bad file wraps: nothing was run.
// ErrFailed is wrapped by the error of a run in which a scenario failed.
var (
	ErrUsage  = errors.New("bad usage")
	ErrFailed = errors.New("scenarios failed")
)

// usageError is an error of bad usage: Is ErrUsage, with its own message.
type usageError struct{ msg string }

func (e usageError) Error() string        { return e.msg }
func (e usageError) Is(target error) bool { return target == ErrUsage }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// failedError is the error of a run in which scenarios failed: Is ErrFailed.
type failedError struct{ msg string }

func (e failedError) Error() string        { return e.msg }
func (e failedError) Is(target error) bool { return target == ErrFailed }

// validate reports every bad field at once, and compiles Run.
func (c Config) validate() (*regexp.Regexp, error) {
	var errs []string
	bad := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	if c.Parallel < 1 {
		bad("--parallel must be at least 1")
	}
	if c.Count < 1 {
		bad("--count must be at least 1")
	}
	switch {
	case c.PassRate < 0 || c.PassRate > 1:
		bad("--pass-rate %v: want a share of the runs, above 0 and at most 1 (0.9: 9 runs in 10)", c.PassRate)
	case c.PassRate > 0 && c.Count < 2:
		bad("--pass-rate needs --count of 2 or more: the rate is a share of a scenario's runs")
	}
	if c.Timeout <= 0 || c.StartTimeout <= 0 {
		bad("--timeout and --start-timeout must be positive")
	}
	if c.Start != "" && c.NoStart {
		bad("--start and --no-start contradict each other")
	}
	if c.Watch && (c.List || c.JUnit != "") {
		bad("--watch runs until interrupted: it takes neither --list nor --junit")
	}
	if c.App != "" {
		if err := scenario.CheckAppURL(c.App); err != nil {
			bad("--app: %v", err)
		}
	}
	if c.CallOptions == nil {
		bad("no CallOptions")
	}
	var selected *regexp.Regexp
	if c.Run != "" {
		var err error
		if selected, err = regexp.Compile(c.Run); err != nil {
			bad("--run: %v", err)
		}
	}
	if len(errs) > 0 {
		return nil, usagef("%s", strings.Join(errs, "\n"))
	}
	return selected, nil
}
