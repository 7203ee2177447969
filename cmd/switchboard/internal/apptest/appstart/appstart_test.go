package appstart_test

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/switchboard-voice/switchboard/cmd/switchboard/internal/apptest/appstart"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// reserved is a loopback address bound but not listening: connections to it fail
// until listen is called, and no other process can take it meanwhile.
func reserved(t *testing.T) (addr string, listen func()) {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(sa.(*syscall.SockaddrInet4).Port))
	return addr, func() {
		if err := syscall.Listen(fd, 16); err != nil {
			t.Error(err)
		}
	}
}

func start(t *testing.T, command string) *appstart.App {
	t.Helper()
	a, err := appstart.Start(appstart.Options{Command: command})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Stop(time.Second) })
	return a
}

// WaitReady returns once the address accepts connections, not before.
func TestWaitReady(t *testing.T) {
	addr, listen := reserved(t)
	a := start(t, "echo starting; exec sleep 600")
	done := make(chan error, 1)
	go func() { done <- a.WaitReady(context.Background(), []string{addr}, time.Minute) }()
	select {
	case err := <-done:
		t.Fatalf("ready before the address listened: %v", err)
	default:
	}
	listen()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if exited, _ := a.Exited(); exited || a.Command() != "echo starting; exec sleep 600" {
		t.Fatalf("exited %v", exited)
	}
}

// An app that exits first, or never listens, is an error that says which.
func TestWaitReadyFails(t *testing.T) {
	addr, _ := reserved(t)
	a := start(t, "echo no config >&2; exit 3")
	err := a.WaitReady(context.Background(), []string{addr}, time.Minute)
	if err == nil || !strings.Contains(err.Error(), "exited (exit status 3) before accepting connections at "+addr) || a.Output() != "no config\n" {
		t.Fatalf("%v, output %q", err, a.Output())
	}
	a = start(t, "exec sleep 600")
	err = a.WaitReady(context.Background(), []string{addr}, 300*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "did not accept connections at "+addr+" within 300ms") {
		t.Fatalf("%v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := a.WaitReady(ctx, []string{addr}, time.Minute); !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled: %v", err)
	}
	if _, err := appstart.Start(appstart.Options{Command: " "}); err == nil {
		t.Fatal("an empty command started")
	}
}

// Stop ends the whole group: the shell, its children and theirs, SIGKILL for those
// that ignore SIGTERM; the working directory and environment are the app's.
func TestStop(t *testing.T) {
	dir := t.TempDir()
	a, err := appstart.Start(appstart.Options{
		Command: `echo "$PWD $APPSTART_TEST"; sh -c 'trap "" TERM; echo $$ > child.pid; exec sleep 600' & sleep 600 & wait`,
		Dir:     dir, Env: append(os.Environ(), "APPSTART_TEST=yes"),
	})
	if err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(dir, "child.pid")
	var child int
	for deadline := time.Now().Add(time.Minute); child == 0; { // another process's file: poll
		if raw, err := os.ReadFile(pidFile); err == nil && strings.HasSuffix(string(raw), "\n") {
			child, _ = strconv.Atoi(strings.TrimSpace(string(raw)))
		} else if time.Now().After(deadline) {
			t.Fatal("the child never started")
		} else {
			time.Sleep(10 * time.Millisecond)
		}
	}
	a.Stop(200 * time.Millisecond)
	if exited, _ := a.Exited(); !exited {
		t.Fatal("the shell is still running")
	}
	if err := syscall.Kill(child, 0); err == nil {
		if stat, _ := os.ReadFile("/proc/" + strconv.Itoa(child) + "/stat"); !strings.Contains(string(stat), ") Z ") {
			t.Fatalf("the child that ignores SIGTERM is alive: %s", stat)
		}
	}
	if got := a.Output(); got != dir+" yes\n" {
		t.Fatalf("output %q", got)
	}
}
