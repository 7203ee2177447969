package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/rs/zerolog"

	"github.com/switchboard-voice/switchboard/cmd/switchboard/internal/benchkit"
)

// Exit statuses shared by every command.
const (
	exitOK      = 0
	exitFailure = 1 // the command ran and found a failure (a call failed, an expectation did not hold)
	exitUsage   = 2 // bad usage, bad input: nothing was done
)

func main() {
	// A `bench calls` helper process runs its part and exits here.
	benchkit.RunWorkerIfAsked()
	setLogTimeFormat()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv)
	stop()
	os.Exit(code)
}

// cli is what every command needs from the process: streams, environment, logger.
type cli struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	getenv func(string) string
	logger zerolog.Logger
}

// exitError carries an exit status through cobra's error return.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// usageError makes err exit with status 2.
func usageError(format string, args ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, args...)}
}

// failure makes err exit with status 1.
func failure(err error) error { return &exitError{code: exitFailure, err: err} }

// run executes the command line and returns the exit status. Tests call it directly.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	c := &cli{stdin: stdin, stdout: stdout, stderr: stderr, getenv: getenv}
	root := newRootCmd(c)
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil && ee.err.Error() != "" {
			fmt.Fprintln(stderr, "switchboard:", ee.err)
		}
		return ee.code
	}
	// Anything cobra itself reports (unknown command or flag, wrong arg count) is usage.
	fmt.Fprintln(stderr, "switchboard:", err)
	return exitUsage
}
