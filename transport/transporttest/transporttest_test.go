package transporttest_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/switchboard-voice/switchboard/transport/transporttest"
)

func plainClient(t *testing.T, timeout time.Duration) *http.Client {
	c := &http.Client{
		Timeout:       timeout,
		Transport:     &http.Transport{},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	t.Cleanup(c.CloseIdleConnections)
	return c
}

func TestClosedAddrRefuses(t *testing.T) {
	t.Parallel()
	addr := transporttest.ClosedAddr(t)
	_, err := net.Dial("tcp4", addr)
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("dial: %v, want connection refused", err)
	}
	// Held for the test: nobody else can listen there meanwhile.
	if ln, err := net.Listen("tcp4", addr); err == nil {
		ln.Close()
		t.Fatalf("listened on the closed address %s", addr)
	}
}

// SharedPort's port takes a listener at two loopback addresses, and no other socket
// is handed it meanwhile.
func TestSharedPort(t *testing.T) {
	t.Parallel()
	port := transporttest.SharedPort(t)
	srv := transporttest.NewServerOn(t, "127.0.0.1:"+port)
	silent := transporttest.NewSilentOn(t, "127.0.0.2:"+port)
	if !strings.HasSuffix(srv.Listener.Addr().String(), ":"+port) || !strings.HasSuffix(silent.Addr, ":"+port) {
		t.Fatalf("listening on %s and %s, want port %s", srv.Listener.Addr(), silent.Addr, port)
	}
	resp, err := plainClient(t, 5*time.Second).Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for range 200 {
		ln, err := net.Listen("tcp4", "127.0.0.3:0")
		if err != nil {
			t.Fatal(err)
		}
		_, got, _ := net.SplitHostPort(ln.Addr().String())
		ln.Close()
		if got == port {
			t.Fatalf("a port-0 listener was given the shared port %s", port)
		}
	}
}

// Received and Connected signal arrivals, so tests wait without polling.
func TestArrivalSignals(t *testing.T) {
	t.Parallel()
	s := transporttest.NewServer(t)
	second := s.Received("/a", 2)
	for range 2 {
		resp, err := plainClient(t, 5*time.Second).Get(s.URL + "/a")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	select {
	case <-second:
	default:
		t.Fatal("Received(/a, 2) not closed after two requests")
	}
	select {
	case <-s.Received("/a", 3):
		t.Fatal("Received(/a, 3) closed after two requests")
	case <-s.Received("/b", 1):
		t.Fatal("Received(/b, 1) closed with no request to /b")
	default:
	}

	silent := transporttest.NewSilent(t)
	c, err := net.Dial("tcp4", silent.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	select {
	case <-silent.Connected(1):
	case <-time.After(10 * time.Second):
		t.Fatal("Connected(1) not closed")
	}
	if silent.Accepted() != 1 {
		t.Fatalf("accepted %d", silent.Accepted())
	}
}

// On Pipes, under testing/synctest, a held answer and a client's timeout play out on
// the bubble's clock: exactly, and without waiting.
func TestPipeServerUnderSynctest(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		s, pipes := transporttest.NewPipeServer(t)
		s.Script("/slow", transporttest.Step{Delay: time.Hour, Body: []byte("late")})
		tr := &http.Transport{DialContext: pipes.DialContext}
		t.Cleanup(tr.CloseIdleConnections)
		c := &http.Client{Transport: tr}
		start := time.Now()
		resp, err := c.Get(s.URL + "/slow")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(body) != "late" || time.Since(start) != time.Hour {
			t.Fatalf("got %q after %v, want \"late\" after exactly 1h", body, time.Since(start))
		}
		c.Timeout = 150 * time.Millisecond
		s.Script("/slow", transporttest.Step{Delay: time.Hour})
		start = time.Now()
		if _, err := c.Get(s.URL + "/slow"); err == nil || time.Since(start) != 150*time.Millisecond {
			t.Fatalf("held answer: %v after %v, want a timeout after exactly 150ms", err, time.Since(start))
		}
		<-s.Received("/slow", 2)
		if n := len(s.RequestsTo("/slow")); n != 2 {
			t.Fatalf("%d requests", n)
		}
	})
}

func TestPipesRefuseAfterClose(t *testing.T) {
	t.Parallel()
	p := transporttest.NewPipes()
	p.Close()
	p.Close() // twice is fine
	if _, err := p.DialContext(context.Background(), "tcp", "x:1"); err == nil {
		t.Fatal("dialed a closed Pipes")
	}
	if _, err := p.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Accept after Close: %v", err)
	}
}

func TestSilentAcceptsAndNeverAnswers(t *testing.T) {
	t.Parallel()
	s := transporttest.NewSilent(t)
	_, err := plainClient(t, 200*time.Millisecond).Get("http://" + s.Addr + "/")
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("GET: %v, want a timeout", err)
	}
	<-s.Connected(1) // the client may time out before the accept is counted
	if s.Accepted() != 1 {
		t.Fatalf("accepted %d", s.Accepted())
	}
	s.Close()
	s.Close() // twice is fine
}

func TestUnacceptingTimesOutConnect(t *testing.T) {
	t.Parallel()
	u := transporttest.NewUnaccepting(t)
	start := time.Now()
	_, err := net.DialTimeout("tcp4", u.Addr, 300*time.Millisecond)
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("dial: %v, want a connect timeout", err)
	}
	if time.Since(start) < 250*time.Millisecond {
		t.Fatalf("failed after %v: not a timeout", time.Since(start))
	}
}

func TestServerScriptAndLog(t *testing.T) {
	t.Parallel()
	s := transporttest.NewServer(t)
	s.Script("/a", transporttest.Statuses(500, 201, 204)...)
	s.Script("/r", transporttest.Redirect(http.StatusFound, "/elsewhere"))
	s.Script("/j", transporttest.JSON(200, `[1]`))
	c := plainClient(t, 5*time.Second)
	var got []int
	for range 5 {
		resp, err := c.Post(s.URL+"/a?q=1", "text/plain", strings.NewReader("hello"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		got = append(got, resp.StatusCode)
	}
	if want := []int{500, 201, 204, 204, 204}; !slices.Equal(got, want) {
		t.Errorf("statuses %v, want %v (the last step repeats)", got, want)
	}
	resp, err := c.Get(s.URL + "/r")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != "/elsewhere" {
		t.Errorf("redirect: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	resp, err = c.Get(s.URL + "/j")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "[1]" || resp.Header.Get("Content-Type") != "application/json" {
		t.Errorf("json: %q %q", b, resp.Header.Get("Content-Type"))
	}
	reqs := s.RequestsTo("/a")
	if len(reqs) != 5 || reqs[0].Method != http.MethodPost || string(reqs[0].Body) != "hello" ||
		reqs[0].RawQuery != "q=1" || reqs[0].Header.Get("Content-Type") != "text/plain" || reqs[0].Time.IsZero() {
		t.Errorf("request log: %+v", reqs)
	}
	if len(s.Requests()) != 7 {
		t.Errorf("%d requests logged, want 7", len(s.Requests()))
	}
}

func TestServerFaults(t *testing.T) {
	t.Parallel()
	s := transporttest.NewServer(t)
	s.Script("/slow", transporttest.Step{Delay: 10 * time.Second})
	s.Script("/reset", transporttest.Step{ResetBeforeHeaders: true})
	s.Script("/close", transporttest.Step{CloseBeforeHeaders: true})
	s.Script("/midbody", transporttest.Step{BodySize: 1 << 20, ResetAfter: 10})
	s.Script("/big", transporttest.Step{BodySize: 3 << 20})
	// Only the slow answer meets the short timeout; the others must not race it.
	_, err := plainClient(t, 300*time.Millisecond).Get(s.URL + "/slow")
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Errorf("slow headers: %v", err)
	}
	c := plainClient(t, 10*time.Second)
	if _, err := c.Get(s.URL + "/reset"); !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("reset: %v", err)
	}
	if _, err := c.Get(s.URL + "/close"); !errors.Is(err, io.EOF) {
		t.Errorf("close: %v", err)
	}
	resp, err := c.Get(s.URL + "/midbody")
	if err != nil {
		t.Fatalf("midbody headers: %v", err)
	}
	n, err := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err == nil || n >= 1<<20 {
		t.Errorf("mid-body reset: read %d bytes, err %v", n, err)
	}
	resp, err = plainClient(t, 10*time.Second).Get(s.URL + "/big")
	if err != nil {
		t.Fatal(err)
	}
	n, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if n != 3<<20 {
		t.Errorf("big body: %d bytes", n)
	}
}

// A hanging request is released when the server closes.
func TestServerHangReleasedOnClose(t *testing.T) {
	t.Parallel()
	s := transporttest.NewServer(t)
	s.Script("/ws", transporttest.Step{Hang: true})
	done := make(chan error, 1)
	go func() {
		resp, err := plainClient(t, 0).Get(s.URL + "/ws")
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	<-s.Received("/ws", 1)
	s.Close()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("hanging request got an answer")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("hanging request not released by Close")
	}
}

func TestTLSServerTrustedOnlyWithItsConfig(t *testing.T) {
	t.Parallel()
	s := transporttest.NewTLSServer(t)
	if _, err := plainClient(t, 5*time.Second).Get(s.URL); err == nil {
		t.Error("untrusted certificate accepted")
	}
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: s.TLSConfig()}}
	defer c.CloseIdleConnections()
	resp, err := c.Get(s.URL)
	if err != nil {
		t.Fatalf("trusted: %v", err)
	}
	resp.Body.Close()
}

func TestRawAnswersBytes(t *testing.T) {
	t.Parallel()
	r := transporttest.NewRaw(t, []byte("NOT HTTP\r\n\r\n"))
	c, err := net.Dial("tcp4", r.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, _ = io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || line != "NOT HTTP\r\n" {
		t.Fatalf("read %q, %v", line, err)
	}
}

func TestServerOnFixedAddress(t *testing.T) {
	t.Parallel()
	s := transporttest.NewServerOn(t, "127.0.0.2:0")
	if !strings.HasPrefix(s.Listener.Addr().String(), "127.0.0.2:") {
		t.Fatalf("listening on %s", s.Listener.Addr())
	}
	resp, err := plainClient(t, 5*time.Second).Get(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
}
