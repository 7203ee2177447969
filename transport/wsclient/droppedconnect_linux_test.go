package wsclient

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/internal/testkit"
	"github.com/switchboard-voice/switchboard/retry"
)

// fullBacklogURL is a loopback listener whose accept queue is full: Linux drops the
// SYNs of further connects, which then hang as against a host that silently drops
// connection attempts.
func fullBacklogURL(t *testing.T) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Skip("raw socket:", err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Listen(fd, 0); err != nil { // never accepted
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", sa.(*syscall.SockaddrInet4).Port)
	for range 8 {
		c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err != nil {
			return "ws://" + addr + "/ws" // this connect hung: the queue is full
		}
		t.Cleanup(func() { c.Close() })
	}
	t.Skip("could not fill the accept queue")
	return ""
}

func TestDialSilentlyDroppedConnect(t *testing.T) {
	t.Parallel()
	url := fullBacklogURL(t)
	for _, tt := range []struct {
		fragment string
		delays   []time.Duration
	}{
		{"", nil},
		{"#rc=2&rp=ct", seconds(0.5, 1)},
	} {
		rec := &testkit.SleepRecorder{}
		opts := testOptions(t, rec)
		opts.HandshakeTimeout = shortHandshake
		_, err := Dial(context.Background(), mustTarget(t, url+tt.fragment), opts)
		var de *DialError
		if !errors.As(err, &de) || de.Class != retry.HandshakeTimeout || len(de.Attempts) != len(tt.delays)+1 {
			t.Fatalf("%q: err = %v, want %d handshake-timeout attempts", tt.fragment, err, len(tt.delays)+1)
		}
		if !slices.Equal(rec.Delays(), tt.delays) {
			t.Errorf("%q: waits %v, want %v", tt.fragment, rec.Delays(), tt.delays)
		}
	}
}
