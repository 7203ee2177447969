package netfault

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"slices"
	"syscall"
	"testing"
	"testing/synctest"
	"time"
)

// pipeDial dials one end of a net.Pipe and hands the other to the test.
func pipeDial(server chan<- net.Conn) func(context.Context, string, string) (net.Conn, error) {
	return func(context.Context, string, string) (net.Conn, error) {
		c, s := net.Pipe()
		server <- s
		return c, nil
	}
}

// connectPipe makes one attempt of n over a net.Pipe: the call's end and the app's.
func connectPipe(t *testing.T, n *Network) (conn, srv net.Conn) {
	t.Helper()
	servers := make(chan net.Conn, 1)
	conn, err := n.Connect(context.Background(), "tcp", "127.0.0.1:80", pipeDial(servers))
	if err != nil {
		t.Fatal(err)
	}
	return conn, <-servers
}

// Latency delays each write and each arrival; a slow app's answers come later still.
// In a synctest bubble the delays are exact.
func TestLatencyAndSlowApp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := New(Config{Latency: 100 * time.Millisecond, SlowApp: 300 * time.Millisecond}, "CA1")
		conn, srv := connectPipe(t, n)
		defer conn.Close()
		defer srv.Close()
		start := time.Now()
		go func() { _, _ = conn.Write([]byte("request")) }()
		buf := make([]byte, 16)
		k, _ := srv.Read(buf)
		if got := time.Since(start); got != 100*time.Millisecond || string(buf[:k]) != "request" {
			t.Fatalf("the app got %q after %v, want the request after the 100 ms latency", buf[:k], got)
		}
		answered := time.Now()
		go func() { _, _ = srv.Write([]byte("answer")) }()
		k, err := conn.Read(buf)
		if got := time.Since(answered); err != nil || got != 400*time.Millisecond || string(buf[:k]) != "answer" {
			t.Fatalf("the call read %q, %v after %v; want the answer after latency + slow app (400 ms)", buf[:k], err, got)
		}
	})
}

// With jitter every message's latency lies within Latency ± Jitter, bytes keep their
// order, and the error that ends the socket comes after the bytes before it.
func TestJitterKeepsOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := New(Config{Latency: 50 * time.Millisecond, Jitter: 40 * time.Millisecond}, "CA2")
		conn, srv := connectPipe(t, n)
		go func() {
			for i := range 50 {
				_, _ = srv.Write([]byte{byte(i)})
				time.Sleep(time.Millisecond)
			}
			srv.Close()
		}()
		var got []byte
		buf := make([]byte, 8)
		for {
			k, err := conn.Read(buf)
			got = append(got, buf[:k]...)
			if err != nil {
				if !errors.Is(err, io.EOF) {
					t.Fatalf("read error %v, want the pipe's EOF", err)
				}
				break
			}
		}
		conn.Close()
		for i := range 50 {
			if i >= len(got) || got[i] != byte(i) {
				t.Fatalf("bytes %v: order lost", got)
			}
		}
		var lat []time.Duration
		for range 200 {
			lat = append(lat, n.latency())
		}
		if slices.Min(lat) < 10*time.Millisecond || slices.Max(lat) > 90*time.Millisecond || slices.Min(lat) == slices.Max(lat) {
			t.Fatalf("latencies from %v to %v, want varied within 50 ms ± 40 ms", slices.Min(lat), slices.Max(lat))
		}
	})
}

// The first Refuse attempts are refused without dialing (a connect failure), the next
// Reset attempts are dialed and reset as the answer arrives; later ones are clean.
// Each injected fault is noted.
func TestRefuseThenReset(t *testing.T) {
	n := New(Config{Refuse: 2, Reset: 1}, "CA3")
	dials := 0
	servers := make(chan net.Conn, 3)
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials++
		return pipeDial(servers)(ctx, network, addr)
	}
	for range 2 {
		_, err := n.Connect(context.Background(), "tcp", "127.0.0.1:80", dial)
		if !errors.Is(err, syscall.ECONNREFUSED) || dials != 0 {
			t.Fatalf("error %v after %d dials, want a refusal without dialing", err, dials)
		}
	}
	conn, err := n.Connect(context.Background(), "tcp", "127.0.0.1:80", dial)
	if err != nil || dials != 1 {
		t.Fatalf("third attempt: %v, %d dials", err, dials)
	}
	srv := <-servers
	go func() { _, _ = srv.Write([]byte("HTTP/1.1 200 OK\r\n")) }()
	if _, err := conn.Read(make([]byte, 64)); !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("read %v, want the connection reset as the answer arrives", err)
	}
	conn, err = n.Connect(context.Background(), "tcp", "127.0.0.1:80", dial)
	if err != nil {
		t.Fatal(err)
	}
	srv = <-servers
	go func() { _, _ = srv.Write([]byte("ok")) }()
	if k, err := conn.Read(make([]byte, 8)); err != nil || k != 2 {
		t.Fatalf("fourth attempt read %d, %v: want a clean connection", k, err)
	}
	conn.Close()
	want := []Note{{Refused, 1}, {Refused, 2}, {Reset, 3}}
	if got := n.Notes(); !slices.Equal(got, want) || len(n.Notes()) != 0 {
		t.Fatalf("notes %v, want %v once", got, want)
	}
}

// A read deadline bounds a wait for delayed bytes, and loses none of them; Close ends
// every wait at once.
func TestDelayConnDeadlineAndClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := New(Config{Latency: time.Second}, "CA4")
		conn, srv := connectPipe(t, n)
		defer srv.Close()
		go func() { _, _ = srv.Write([]byte("late")) }()
		_ = conn.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
		buf := make([]byte, 8)
		if _, err := conn.Read(buf); !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("read %v, want the deadline", err)
		}
		_ = conn.SetReadDeadline(time.Time{})
		if k, err := conn.Read(buf); err != nil || string(buf[:k]) != "late" {
			t.Fatalf("after the deadline: %q, %v; want the bytes kept", buf[:k], err)
		}
		done := make(chan error)
		go func() {
			_, err := conn.Write([]byte("x"))
			done <- err
		}()
		synctest.Wait()
		conn.Close()
		if err := <-done; !errors.Is(err, net.ErrClosed) {
			t.Fatalf("write during its delay, then Close: %v, want net.ErrClosed", err)
		}
	})
}

// A read deadline set while a Read waits counts at once, whether the Read waits for
// bytes or for delayed ones to be due (wsclient cuts a wait short so), and the bytes
// are kept.
func TestDelayConnDeadlineSetDuringRead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := New(Config{Latency: time.Second}, "CA5")
		conn, srv := connectPipe(t, n)
		defer srv.Close()
		defer conn.Close()
		buf := make([]byte, 8)
		for _, withBytes := range []bool{false, true} {
			done := make(chan error)
			go func() {
				_, err := conn.Read(buf)
				done <- err
			}()
			if withBytes {
				go func() { _, _ = srv.Write([]byte("late")) }()
			}
			synctest.Wait()
			_ = conn.SetReadDeadline(time.Unix(1, 0))
			if err := <-done; !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("bytes on their way %v: read %v, want the deadline", withBytes, err)
			}
			_ = conn.SetReadDeadline(time.Time{})
		}
		if k, err := conn.Read(buf); err != nil || string(buf[:k]) != "late" {
			t.Fatalf("after the deadline: %q, %v; want the bytes kept", buf[:k], err)
		}
	})
}
