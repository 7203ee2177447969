package wsclient

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/switchboard-voice/switchboard/internal/testkit"
	"github.com/switchboard-voice/switchboard/retry"
	"github.com/switchboard-voice/switchboard/transport"
)

func newTLSWSServer(t *testing.T) *httptest.Server {
	t.Helper()
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{Subprotocol}})
		if err != nil {
			return
		}
		defer c.CloseNow()
		for {
			typ, b, err := c.Read(context.Background())
			if err != nil || c.Write(context.Background(), typ, b) != nil {
				return
			}
		}
	}))
	s.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes are expected
	s.StartTLS()
	t.Cleanup(s.Close)
	return s
}

// TestDialTLS: wss through the egress client, HTTP/1.1 upgrade over TLS.
func TestDialTLS(t *testing.T) {
	t.Parallel()
	s := newTLSWSServer(t)
	pool := x509.NewCertPool()
	pool.AddCert(s.Certificate())
	client := transport.NewHTTPClient(transport.CallControlRules(true), transport.ClientOptions{TLSConfig: &tls.Config{RootCAs: pool}})
	t.Cleanup(client.CloseIdleConnections)
	opts := testOptions(t, &testkit.SleepRecorder{})
	opts.HTTPClient = client
	conn, err := Dial(context.Background(), mustTarget(t, "wss"+strings.TrimPrefix(s.URL, "https")), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(1000, "")
	if err := conn.Write(context.Background(), []byte("over tls")); err != nil {
		t.Fatal(err)
	}
	if got, err := readCtx(t, conn); err != nil || string(got) != "over tls" {
		t.Errorf("echo: %q, %v", got, err)
	}
	// A wait cut short leaves the TLS connection whole too (a read deadline is not
	// fatal to a tls.Conn).
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	if _, err := conn.Read(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a Read with nothing to read: %v, want DeadlineExceeded", err)
	}
	if err := conn.Write(context.Background(), []byte("again")); err != nil {
		t.Fatal(err)
	}
	if got, err := readCtx(t, conn); err != nil || string(got) != "again" {
		t.Errorf("after the cut: %q, %v", got, err)
	}
}

// TestDialUntrustedCertificate: a certificate that does not verify is permanent,
// never retried, whatever rp says.
func TestDialUntrustedCertificate(t *testing.T) {
	t.Parallel()
	s := newTLSWSServer(t)
	rec := &testkit.SleepRecorder{}
	opts := testOptions(t, rec)
	_, err := Dial(context.Background(), mustTarget(t, "wss"+strings.TrimPrefix(s.URL, "https")+"#rc=3&rp=all"), opts)
	var de *DialError
	if !errors.As(err, &de) || de.Class != retry.Permanent || len(de.Attempts) != 1 {
		t.Fatalf("err = %v, want one permanent attempt", err)
	}
	if len(rec.Delays()) != 0 {
		t.Errorf("waited %v", rec.Delays())
	}
}
