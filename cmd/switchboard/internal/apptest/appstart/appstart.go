package appstart

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Options say what to start.
type Options struct {
	// Command is a shell command line (sh -c).
	Command string
	// Dir is its working directory. Default: the current one.
	Dir string
	// Env is its environment. Default (nil): the process's.
	Env []string
	// Output receives everything the app writes on stdout and stderr, besides the
	// tail App.Output keeps. Default: nothing.
	Output io.Writer
}

// App is an application started by Start.
type App struct {
	opts   Options
	cmd    *exec.Cmd
	tail   *tail
	exited chan struct{} // closed once the shell has exited
	err    error         // its exit status, once exited is closed
}

// outputTail is how much of the app's output is kept to show when it fails.
const outputTail = 16 << 10

// pollInterval is how often WaitReady tries the addresses: the app is another
// process, whose readiness is known only by trying.
const pollInterval = 100 * time.Millisecond

// Start starts the command in a process group of its own.
func Start(opts Options) (*App, error) {
	if strings.TrimSpace(opts.Command) == "" {
		return nil, errors.New("no command to start")
	}
	a := &App{opts: opts, tail: &tail{max: outputTail}, exited: make(chan struct{})}
	out := io.Writer(a.tail)
	if opts.Output != nil {
		out = io.MultiWriter(a.tail, opts.Output)
	}
	a.cmd = exec.Command("sh", "-c", opts.Command)
	a.cmd.Dir, a.cmd.Env, a.cmd.Stdout, a.cmd.Stderr = opts.Dir, opts.Env, out, out
	a.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// A child of the app that outlives it may hold the output pipe open: Wait
	// gives up on the pipe this long after the shell exits.
	a.cmd.WaitDelay = time.Second
	if err := a.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %q: %w", opts.Command, err)
	}
	go func() {
		a.err = a.cmd.Wait()
		close(a.exited)
	}()
	return a, nil
}

// Command is the command line the app was started with.
func (a *App) Command() string { return a.opts.Command }

// Output is the last of what the app wrote (16 KiB at most).
func (a *App) Output() string { return a.tail.String() }

// Exited reports whether the app's shell has exited, and how.
func (a *App) Exited() (bool, error) {
	select {
	case <-a.exited:
		return true, a.err
	default:
		return false, nil
	}
}

// WaitReady returns once every address accepts a TCP connection. It fails when the
// app exits first, when timeout passes, or when ctx ends; the error says which and
// what did not accept connections.
func (a *App) WaitReady(ctx context.Context, addrs []string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	pending := append([]string(nil), addrs...)
	var last error
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		var still []string
		for _, addr := range pending {
			d := net.Dialer{Timeout: time.Second}
			conn, err := d.DialContext(ctx, "tcp", addr)
			if err != nil {
				still = append(still, addr)
				if ctx.Err() == nil { // not the wait's own end cutting the dial short
					last = err
				}
				continue
			}
			conn.Close()
		}
		if pending = still; len(pending) == 0 {
			return nil
		}
		select {
		case <-a.exited:
			return fmt.Errorf("it exited (%v) before accepting connections at %s", exitStatus(a.err), strings.Join(pending, ", "))
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return fmt.Errorf("it did not accept connections at %s within %v (%v)", strings.Join(pending, ", "), timeout, last)
			}
			return ctx.Err()
		case <-tick.C:
		}
	}
}

func exitStatus(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}

// Stop ends the app's process group: SIGTERM, then SIGKILL to what is left after
// grace. It returns once the shell has exited and the group is gone (or grace has
// passed for a process that is gone but not yet reaped).
func (a *App) Stop(grace time.Duration) {
	pgid := a.cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) && groupAlive(pgid) {
		time.Sleep(pollInterval / 2) // another process's exit is seen only by asking
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	<-a.exited
	// SIGKILL is sent, not yet delivered: a loaded machine may take a while to
	// schedule the group's processes to die, and until then they hold the app's
	// port. A process stuck in the kernel could take forever: that one is left.
	for deadline := time.Now().Add(killWait); time.Now().Before(deadline) && groupAlive(pgid); {
		time.Sleep(pollInterval / 2)
	}
}

// killWait bounds how long Stop waits for the group to die after SIGKILL.
const killWait = 10 * time.Second

// groupAlive reports whether a process of the group is left. A process that has
// exited but is not yet reaped (a zombie: the app's children are reparented to PID
// 1 once its shell exits, and PID 1 reaps when it will) holds nothing and counts
// as gone when /proc can tell.
func groupAlive(pgid int) bool {
	if syscall.Kill(-pgid, 0) != nil {
		return false
	}
	alive, known := liveInGroup(pgid)
	return alive || !known
}

// liveInGroup reports whether /proc lists a process of the group that is not a
// zombie; known is false when /proc cannot be read.
func liveInGroup(pgid int) (alive, known bool) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return false, false
	}
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // it exited meanwhile
		}
		// pid (comm) state ppid pgrp ...: comm may hold spaces and parentheses.
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(stat[i+1:]))
		if len(f) < 3 || f[2] != strconv.Itoa(pgid) {
			continue
		}
		if f[0] != "Z" && f[0] != "X" {
			return true, true
		}
	}
	return false, true
}

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
