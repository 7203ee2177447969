package transport_test

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/fragment"
	"github.com/switchboard-voice/switchboard/retry"
	"github.com/switchboard-voice/switchboard/transport"
	"github.com/switchboard-voice/switchboard/transport/transporttest"
)

// TestClassifyRealSockets provokes each failure on a real loopback socket with the
// egress client and checks the class Classify gives the error, and the typed error
// it is recognised by.
func TestClassifyRealSockets(t *testing.T) {
	t.Parallel()
	// Each row shortens only the timeout it expects to fire; the others stay long, so
	// that what must happen before it (a loopback connect, an answer) always does.
	const short, long = 200 * time.Millisecond, 10 * time.Second
	resolver := transport.ResolverFunc(func(_ context.Context, _, host string) ([]netip.Addr, error) {
		switch host {
		case "nxdomain.test":
			return nil, notFound(host)
		case "flaky-dns.test":
			return nil, temporaryDNS(host)
		case "slow-dns.test":
			return nil, timeoutDNS(host)
		case "empty.test":
			return nil, nil
		}
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	})
	type row struct {
		name       string
		url        func(t *testing.T) string
		rules      transport.EgressRules // default: call control with loopback
		want       retry.Class
		is         error            // errors.Is target, if any
		as         func(error) bool // typed check, if any
		tlsTimeout time.Duration    // ClientOptions.TLSHandshakeTimeout
		connect    time.Duration    // ClientOptions.ConnectTimeout (default long)
		headers    time.Duration    // ClientOptions.ResponseHeaderTimeout (default long)
	}
	connectErr := func(op string) func(error) bool {
		return func(err error) bool {
			var ce *transport.ConnectError
			return errors.As(err, &ce) && ce.Op == op
		}
	}
	server := func(steps ...transporttest.Step) func(t *testing.T) string {
		return func(t *testing.T) string {
			s := transporttest.NewServer(t)
			s.Script("/x", steps...)
			return s.URL + "/x"
		}
	}
	fixed := func(u string) func(*testing.T) string { return func(*testing.T) string { return u } }
	rows := []row{
		{name: "connection refused", url: func(t *testing.T) string { return "http://" + transporttest.ClosedAddr(t) + "/" },
			want: retry.Connect, is: syscall.ECONNREFUSED, as: connectErr("dial")},
		{name: "TCP connect timeout", url: func(t *testing.T) string { return "http://" + transporttest.NewUnaccepting(t).Addr + "/" },
			connect: short, want: retry.Connect, as: func(err error) bool {
				var ne net.Error
				return connectErr("dial")(err) && errors.As(err, &ne) && ne.Timeout()
			}},
		{name: "accepted, never answered: no response headers", url: func(t *testing.T) string { return "http://" + transporttest.NewSilent(t).Addr + "/" },
			headers: short, want: retry.ResponseTimeout, as: func(err error) bool { return !connectErr("dial")(err) }},
		{name: "slow response headers", url: server(transporttest.Step{Delay: 30 * time.Second}), headers: short, want: retry.ResponseTimeout},
		{name: "reset before any response", url: server(transporttest.Step{ResetBeforeHeaders: true}), want: retry.Connect, is: syscall.ECONNRESET},
		{name: "closed before any response", url: server(transporttest.Step{CloseBeforeHeaders: true}), want: retry.Connect, is: io.EOF},
		// The handshake shares the connect budget: one long enough for the TCP
		// connect before it to finish on a loaded machine.
		{name: "TLS handshake timeout", url: func(t *testing.T) string { return "https://" + transporttest.NewSilent(t).Addr + "/" },
			connect: time.Second, want: retry.Connect, as: connectErr("tls")},
		{name: "TLS handshake timeout (own budget)", url: func(t *testing.T) string { return "https://" + transporttest.NewSilent(t).Addr + "/" },
			tlsTimeout: short, connect: time.Minute, want: retry.Connect, as: connectErr("tls")},
		{name: "certificate not trusted", url: func(t *testing.T) string { return transporttest.NewTLSServer(t).URL + "/" },
			want: retry.Permanent, as: func(err error) bool {
				var cv *tls.CertificateVerificationError
				return errors.As(err, &cv)
			}},
		{name: "TLS to a plain HTTP port", url: func(t *testing.T) string {
			return "https://" + transporttest.NewServer(t).Listener.Addr().String() + "/"
		}, want: retry.Unparseable},
		{name: "NXDOMAIN", url: fixed("http://nxdomain.test/"), want: retry.Permanent, as: connectErr("lookup")},
		{name: "no addresses", url: fixed("http://empty.test/"), want: retry.Permanent, as: connectErr("lookup")},
		{name: "temporary DNS failure", url: fixed("http://flaky-dns.test/"), want: retry.Connect, as: connectErr("lookup")},
		{name: "DNS timeout", url: fixed("http://slow-dns.test/"), want: retry.Connect, as: connectErr("lookup")},
		{name: "egress refused", url: func(t *testing.T) string { return "http://" + transporttest.NewSilent(t).Addr + "/" },
			rules: transport.CallControlRules(false), want: retry.EgressRefused, is: transport.ErrEgressRefused},
		{name: "garbage instead of HTTP", url: func(t *testing.T) string {
			return "http://" + transporttest.NewRaw(t, []byte("SSH-2.0-OpenSSH\r\n\r\n")).Addr + "/"
		}, want: retry.Unparseable},
		{name: "malformed status line", url: func(t *testing.T) string {
			return "http://" + transporttest.NewRaw(t, []byte("HTTP/1.1 abc OK\r\n\r\n")).Addr + "/"
		}, want: retry.Unparseable},
		{name: "malformed URL", url: fixed("http://[::1"), want: retry.Permanent},
	}
	for _, tc := range rows {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rules := tc.rules
			if rules.Schemes == nil {
				rules = loopbackRules()
			}
			connect, headers := cmp.Or(tc.connect, long), cmp.Or(tc.headers, long)
			client := transport.NewHTTPClient(rules, transport.ClientOptions{
				ConnectTimeout: connect, TLSHandshakeTimeout: tc.tlsTimeout, ResponseHeaderTimeout: headers, Resolver: resolver,
			})
			defer client.CloseIdleConnections()
			start := time.Now()
			resp, err := client.Get(tc.url(t))
			if elapsed := time.Since(start); elapsed > 20*time.Second {
				t.Errorf("took %v: a timeout did not apply", elapsed)
			}
			if err == nil {
				resp.Body.Close()
				t.Fatalf("GET succeeded with status %d", resp.StatusCode)
			}
			if got := transport.Classify(err); got != tc.want {
				t.Errorf("Classify(%v) = %s, want %s", err, got, tc.want)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %v is not %v", err, tc.is)
			}
			if tc.as != nil && !tc.as(err) {
				t.Errorf("error %v (%T) lacks the expected type", err, err)
			}
		})
	}
}

func TestClassifyTrustedTLSSucceeds(t *testing.T) {
	t.Parallel()
	srv := transporttest.NewTLSServer(t)
	client := transport.NewHTTPClient(loopbackRules(), transport.ClientOptions{TLSConfig: srv.TLSConfig()})
	defer client.CloseIdleConnections()
	resp, err := client.Get(srv.URL + "/")
	if err != nil {
		t.Fatalf("GET over trusted TLS: %v", err)
	}
	resp.Body.Close()
}

func TestClassifyCanceled(t *testing.T) {
	t.Parallel()
	srv := transporttest.NewServer(t)
	srv.Script("/x", transporttest.Step{Hang: true})
	client := transport.NewHTTPClient(loopbackRules(), transport.ClientOptions{})
	defer client.CloseIdleConnections()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/x", nil)
	go func() {
		<-srv.Received("/x", 1) // the server holds the request
		cancel()
	}()
	_, err := client.Do(req)
	if got := transport.Classify(err); got != retry.Canceled {
		t.Fatalf("Classify(%v) = %s, want canceled", err, got)
	}
}

// TestClassifyErrorValues covers errors that are not provoked on a socket.
func TestClassifyErrorValues(t *testing.T) {
	t.Parallel()
	rows := []struct {
		err  error
		want retry.Class
	}{
		{nil, retry.Success},
		{fmt.Errorf("wrapped: %w", fragment.ErrInvalidURL), retry.Permanent},
		{fmt.Errorf("x: %w", transport.ErrInvalidRequest), retry.Permanent},
		{&url.Error{Op: "parse", URL: "::", Err: errors.New("missing protocol scheme")}, retry.Permanent},
		{&transport.RefusedError{Reason: "loopback"}, retry.EgressRefused},
		{&url.Error{Op: "Get", URL: "u", Err: &net.OpError{Op: "dial", Err: &transport.RefusedError{Reason: "x"}}}, retry.EgressRefused},
		{&net.DNSError{IsNotFound: true}, retry.Permanent},
		{&net.DNSError{IsTemporary: true}, retry.Connect},
		{fmt.Errorf("read: %w", syscall.ECONNABORTED), retry.Connect},
		{fmt.Errorf("body: %w", transport.ErrBodyTooLarge), retry.Unparseable},
		{io.ErrUnexpectedEOF, retry.Unparseable},
		{context.Canceled, retry.Canceled},
		{context.DeadlineExceeded, retry.ResponseTimeout},
		{&transport.ConnectError{Op: "dial", Err: context.DeadlineExceeded}, retry.Connect},
		{errors.New("something else"), retry.Unparseable},
	}
	for _, r := range rows {
		if got := transport.Classify(r.err); got != r.want {
			t.Errorf("Classify(%v) = %s, want %s", r.err, got, r.want)
		}
	}
}
