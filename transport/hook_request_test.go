package transport_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/switchboard-voice/switchboard/internal/testkit"
	"github.com/switchboard-voice/switchboard/retry"
	"github.com/switchboard-voice/switchboard/transport"
	"github.com/switchboard-voice/switchboard/transport/transporttest"
	"github.com/switchboard-voice/switchboard/transport/webhooksig"
)

func TestHookPostHeadersAndSignature(t *testing.T) {
	t.Parallel()
	srv := transporttest.NewServer(t)
	srv.Script("/call", transporttest.Status(500), transporttest.JSON(200, `[{"verb":"say","text":"hi"}]`))
	// A clock one second further at every reading: each signature of a retried
	// request has its own timestamp.
	clock := testkit.NewClockAt(time.Unix(1_700_000_001, 0))
	clock.SetStep(time.Second)
	client, _ := newHookClient(t, transport.HookClientOptions{Clock: clock})
	payload := map[string]any{"call_sid": "abc", "from": "+15551234567", "customerData": map[string]any{"x": 1}}
	resp, err := client.Do(context.Background(), transport.HookRequest{
		Target:   mustTarget(t, srv.URL+"/call?app=1#rc=1&rp=5xx&other=x"),
		Payload:  payload,
		Username: "user", Password: "p:w",
		Secret: "s3cret",
		Header: http.Header{"X-Trace": {"t1"}, "User-Agent": {"overridden"}},
	})
	if err != nil {
		t.Fatalf("Do: %v", err)
	}
	if resp.Status != 200 || string(resp.Body) != `[{"verb":"say","text":"hi"}]` || len(resp.Attempts) != 2 {
		t.Fatalf("response %d %q with %d attempts", resp.Status, resp.Body, len(resp.Attempts))
	}
	reqs := srv.RequestsTo("/call")
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	wantBody, _ := json.Marshal(payload)
	var stamps []string
	for i, r := range reqs {
		if r.Method != http.MethodPost || r.RawQuery != "app=1" {
			t.Errorf("request %d: %s ?%s (the fragment must never be sent)", i, r.Method, r.RawQuery)
		}
		if string(r.Body) != string(wantBody) {
			t.Errorf("request %d body %s, want %s", i, r.Body, wantBody)
		}
		if got := r.Header.Get("Content-Type"); got != "application/json" {
			t.Errorf("Content-Type %q", got)
		}
		if got := r.Header.Get("User-Agent"); got != "jambonz" {
			t.Errorf("User-Agent %q", got)
		}
		if got := r.Header.Get("X-Trace"); got != "t1" {
			t.Errorf("extra header lost: %q", got)
		}
		u, p, ok := (&http.Request{Header: r.Header}).BasicAuth()
		if !ok || u != "user" || p != "p:w" {
			t.Errorf("basic auth %q %q %v", u, p, ok)
		}
		sig := r.Header.Get("Jambonz-Signature")
		ts, _, _ := strings.Cut(strings.TrimPrefix(sig, "t="), ",")
		stamps = append(stamps, ts)
		at, _ := time.Parse(time.RFC3339, "2023-11-14T22:13:20Z")
		if err := webhooksig.VerifyJambonz("s3cret", sig, r.Body, at, time.Minute); err != nil {
			t.Errorf("request %d signature %q: %v", i, sig, err)
		}
		if err := webhooksig.VerifyJambonz("other", sig, r.Body, at, time.Minute); !errors.Is(err, webhooksig.ErrInvalidSignature) {
			t.Errorf("wrong secret verified: %v", err)
		}
	}
	if stamps[0] == stamps[1] {
		t.Errorf("retry was not re-signed: both t=%s", stamps[0])
	}
}

func TestHookGetSendsFieldsAsQuery(t *testing.T) {
	t.Parallel()
	srv := transporttest.NewServer(t)
	client, _ := newHookClient(t, transport.HookClientOptions{UserAgent: "switchboard/1"})
	now := time.Now()
	_, err := client.Do(context.Background(), transport.HookRequest{
		Target: mustTarget(t, srv.URL+"/status?keep=me%20too"),
		Method: "get",
		Payload: json.RawMessage(`{"call_sid":"abc","duration":12.50,"answered":true,"big":12345678901234567890,
			"sip":{"headers":{"X":"y"}},"nothing":null,"text":"a&b=c"}`),
		Secret: "k",
	})
	if err != nil {
		t.Fatalf("Do: %v", err)
	}
	reqs := srv.RequestsTo("/status")
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	r := reqs[0]
	if r.Method != http.MethodGet || len(r.Body) != 0 || r.Header.Get("Content-Type") != "" {
		t.Errorf("GET sent %s with body %q, Content-Type %q", r.Method, r.Body, r.Header.Get("Content-Type"))
	}
	if !strings.HasPrefix(r.RawQuery, "keep=me%20too&") {
		t.Errorf("the URL's own query was not kept first: %s", r.RawQuery)
	}
	q, _ := url.ParseQuery(r.RawQuery)
	want := map[string]string{
		"keep": "me too", "call_sid": "abc", "duration": "12.50", "answered": "true",
		"big": "12345678901234567890", "sip": `{"headers":{"X":"y"}}`, "text": "a&b=c",
	}
	for k, v := range want {
		if q.Get(k) != v {
			t.Errorf("query %s = %q, want %q", k, q.Get(k), v)
		}
	}
	if q.Has("nothing") {
		t.Errorf("null field sent")
	}
	if r.Header.Get("User-Agent") != "switchboard/1" {
		t.Errorf("User-Agent %q", r.Header.Get("User-Agent"))
	}
	if err := webhooksig.VerifyJambonz("k", r.Header.Get("Jambonz-Signature"), nil, now, time.Minute); err != nil {
		t.Errorf("GET signature over the empty body: %v", err)
	}
}

func TestHookNoAuthNoSignatureByDefault(t *testing.T) {
	t.Parallel()
	srv := transporttest.NewServer(t)
	client, _ := newHookClient(t, transport.HookClientOptions{})
	if _, err := client.Do(context.Background(), transport.HookRequest{Target: mustTarget(t, srv.URL+"/x")}); err != nil {
		t.Fatal(err)
	}
	r := srv.RequestsTo("/x")[0]
	if r.Header.Get("Authorization") != "" || r.Header.Get("Jambonz-Signature") != "" || string(r.Body) != "{}" {
		t.Errorf("unexpected request: %v %q", r.Header, r.Body)
	}
}

func TestHookInvalidRequestSendsNothing(t *testing.T) {
	t.Parallel()
	srv := transporttest.NewServer(t)
	client, _ := newHookClient(t, transport.HookClientOptions{})
	target := mustTarget(t, srv.URL+"/x#rc=3&rp=all")
	bad := []transport.HookRequest{
		{Target: target, Payload: json.RawMessage(`{"unterminated"`)},
		{Target: target, Payload: func() {}},
		{Target: target, Method: "GET", Payload: json.RawMessage(`[1,2]`)},
		{Target: target, Method: "PUT"},
		{},
	}
	for i, hr := range bad {
		resp, err := client.Do(context.Background(), hr)
		if !errors.Is(err, transport.ErrInvalidRequest) || resp != nil {
			t.Errorf("request %d: %v, %v; want ErrInvalidRequest and no response", i, resp, err)
		}
		if c := transport.Classify(err); c != retry.Permanent {
			t.Errorf("request %d classified %s", i, c)
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Fatalf("%d requests were sent", n)
	}
}

// TestHookCancelDuringBackoff: the caller's context ends while waiting between
// attempts; no further attempt is made.
func TestHookCancelDuringBackoff(t *testing.T) {
	t.Parallel()
	srv := transporttest.NewServer(t)
	srv.Script("/x", transporttest.Status(503))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var waits []time.Duration
	client, _ := newHookClient(t, transport.HookClientOptions{
		Sleep: func(ctx context.Context, d time.Duration) error {
			waits = append(waits, d)
			cancel()
			<-ctx.Done()
			return ctx.Err()
		},
	})
	resp, err := client.Do(ctx, transport.HookRequest{Target: mustTarget(t, srv.URL+"/x#rc=5&rp=5xx")})
	var he *transport.HookError
	if !errors.As(err, &he) || he.Class != retry.Canceled || !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want a canceled HookError", err)
	}
	if len(he.Attempts) != 1 || he.Attempts[0].Class != retry.Status5xx || len(waits) != 1 {
		t.Errorf("attempts %+v waits %v", he.Attempts, waits)
	}
	if n := len(srv.RequestsTo("/x")); n != 1 {
		t.Errorf("%d requests after cancel", n)
	}
	_ = resp
}

// TestHookCancelDuringAttempt: the context ends while the server is silent.
func TestHookCancelDuringAttempt(t *testing.T) {
	t.Parallel()
	srv := transporttest.NewServer(t)
	srv.Script("/x", transporttest.Step{Hang: true})
	ctx, cancel := context.WithCancel(context.Background())
	client, rec := newHookClient(t, transport.HookClientOptions{})
	go func() {
		<-srv.Received("/x", 1) // the server holds the request
		cancel()
	}()
	_, err := client.Do(ctx, transport.HookRequest{Target: mustTarget(t, srv.URL+"/x#rc=5&rp=all")})
	var he *transport.HookError
	if !errors.As(err, &he) || he.Class != retry.Canceled || !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want a canceled HookError", err)
	}
	if len(he.Attempts) != 1 || len(rec.Delays()) != 0 {
		t.Errorf("attempts %+v delays %v", he.Attempts, rec.Delays())
	}
}

// TestHookEgressRefusalNeverRetried: retryablehttp's default policy would retry a
// dial error; ours does not, whatever rp says.
func TestHookEgressRefusalNeverRetried(t *testing.T) {
	t.Parallel()
	srv := transporttest.NewServer(t)
	client, rec := newHookClient(t, transport.HookClientOptions{Rules: transport.CallControlRules(false)})
	_, err := client.Do(context.Background(), transport.HookRequest{Target: mustTarget(t, srv.URL+"/x#rc=5&rp=all")})
	var he *transport.HookError
	if !errors.As(err, &he) || he.Class != retry.EgressRefused || len(he.Attempts) != 1 || !errors.Is(err, transport.ErrEgressRefused) {
		t.Fatalf("err = %v, want one egress refusal", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "1 attempt") || !strings.Contains(msg, "loopback") {
		t.Errorf("error message %q lacks the attempt count or the reason", msg)
	}
	if len(rec.Delays()) != 0 || len(srv.Requests()) != 0 {
		t.Fatalf("retried (%v) or sent (%d)", rec.Delays(), len(srv.Requests()))
	}
}

// TestHookPermanentFailuresNeverRetried: NXDOMAIN and an untrusted certificate.
func TestHookPermanentFailuresNeverRetried(t *testing.T) {
	t.Parallel()
	tlsSrv := transporttest.NewTLSServer(t)
	client, rec := newHookClient(t, transport.HookClientOptions{Resolver: staticResolver(nil)})
	for _, u := range []string{"http://nxdomain.test/x", tlsSrv.URL + "/x"} {
		_, err := client.Do(context.Background(), transport.HookRequest{Target: mustTarget(t, u+"#rc=5&rp=all")})
		var he *transport.HookError
		if !errors.As(err, &he) || he.Class != retry.Permanent || len(he.Attempts) != 1 {
			t.Errorf("%s: err = %v, want one permanent failure", u, err)
		}
	}
	if len(rec.Delays()) != 0 {
		t.Errorf("retried: %v", rec.Delays())
	}
	trusted, _ := newHookClient(t, transport.HookClientOptions{TLSConfig: tlsSrv.TLSConfig()})
	if _, err := trusted.Do(context.Background(), transport.HookRequest{Target: mustTarget(t, tlsSrv.URL+"/x")}); err != nil {
		t.Errorf("trusted TLS: %v", err)
	}
}

func TestHookBodyCapped(t *testing.T) {
	t.Parallel()
	srv := transporttest.NewServer(t)
	srv.Script("/x", transporttest.Step{BodySize: 100}, transporttest.Step{BodySize: 64})
	client, _ := newHookClient(t, transport.HookClientOptions{MaxBody: 64})
	resp, err := client.Do(context.Background(), transport.HookRequest{Target: mustTarget(t, srv.URL+"/x")})
	if !errors.Is(err, transport.ErrBodyTooLarge) || resp == nil || len(resp.Body) != 64 {
		t.Fatalf("over the cap: %v, %+v", err, resp)
	}
	resp, err = client.Do(context.Background(), transport.HookRequest{Target: mustTarget(t, srv.URL+"/x")})
	if err != nil || len(resp.Body) != 64 {
		t.Fatalf("at the cap: %v", err)
	}
}

// TestHookFailureKeepsPool: retryablehttp closes idle connections when a request
// gives up; the hook client must not let that empty the shared pool.
func TestHookFailureKeepsPool(t *testing.T) {
	t.Parallel()
	srv := transporttest.NewServer(t)
	refused := "http://" + transporttest.ClosedAddr(t) + "/fail"
	client, _ := newHookClient(t, transport.HookClientOptions{})
	for _, u := range []string{srv.URL + "/ok", refused, srv.URL + "/ok"} {
		_, _ = client.Do(context.Background(), transport.HookRequest{Target: mustTarget(t, u)})
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	for _, r := range reqs[1:] {
		if r.RemoteAddr != reqs[0].RemoteAddr {
			t.Fatalf("connection not reused after a failed hook: %s then %s", reqs[0].RemoteAddr, r.RemoteAddr)
		}
	}
}

// TestHookTimeoutBoundsConnectAndHeadersTogether: docs/call-control.md §3, the timeout
// bounds "connect + response headers": a slow lookup (part of connecting) followed
// by slow headers fails at the timeout, as a response timeout, though each phase
// alone is within it. The connect phase alone past the timeout is a connect failure.
func TestHookTimeoutBoundsConnectAndHeadersTogether(t *testing.T) {
	t.Parallel()
	const timeout = 400 * time.Millisecond
	slowDNS := func(wait time.Duration) transport.Resolver {
		return transport.ResolverFunc(func(ctx context.Context, _, _ string) ([]netip.Addr, error) {
			select {
			case <-time.After(wait):
				return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		})
	}
	for _, tc := range []struct {
		name   string
		lookup time.Duration
		want   retry.Class
	}{
		{"slow lookup, then slow headers", 250 * time.Millisecond, retry.ResponseTimeout},
		{"lookup alone past the timeout", 2 * timeout, retry.Connect},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// In a synctest bubble on an in-memory network the lookup, the held
			// headers and the timeout play out on the bubble's clock: the connection
			// is made at 250 ms exactly, never late enough for a loaded machine to
			// turn the response timeout into a connect failure.
			synctest.Test(t, func(t *testing.T) {
				srv, pipes := transporttest.NewPipeServer(t)
				srv.Script("/x", transporttest.Step{Delay: 250 * time.Millisecond})
				port := srv.Listener.Addr().(*net.TCPAddr).Port
				client, _ := newHookClient(t, transport.WithNetwork(
					transport.HookClientOptions{Timeout: timeout, Resolver: slowDNS(tc.lookup)}, pipes.DialContext))
				start := time.Now()
				_, err := client.Do(context.Background(), transport.HookRequest{Target: mustTarget(t, fmt.Sprintf("http://app.test:%d/x", port))})
				var he *transport.HookError
				if !errors.As(err, &he) || he.Class != tc.want {
					t.Fatalf("error %v, want class %s", err, tc.want)
				}
				if elapsed := time.Since(start); elapsed != timeout {
					t.Errorf("failed after %v, want exactly the %v timeout", elapsed, timeout)
				}
			})
		})
	}
}

// TestHookAcceptRejectsBody: a 200 whose body Accept rejects is an unparseable
// failure, retried under rp=all only (docs/call-control.md §1), and never without Accept.
func TestHookAcceptRejectsBody(t *testing.T) {
	t.Parallel()
	notJSON := func(_ int, _ http.Header, body []byte) error {
		if !json.Valid(body) {
			return errors.New("not JSON")
		}
		return nil
	}
	for _, tc := range []struct {
		name, fragment string
		accept         func(int, http.Header, []byte) error
		classes        []retry.Class
		wantErr        bool
	}{
		{"rp=all retries it", "#rc=2&rp=all", notJSON, []retry.Class{retry.Unparseable, retry.Success}, false},
		{"rp=5xx,ct does not", "#rc=2&rp=5xx,ct", notJSON, []retry.Class{retry.Unparseable}, true},
		{"without Accept it is a success", "#rc=2&rp=all", nil, []retry.Class{retry.Success}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := transporttest.NewServer(t)
			srv.Script("/x", transporttest.Step{Body: []byte("<html>oops</html>")}, transporttest.Step{Body: []byte(`[]`)})
			client, _ := newHookClient(t, transport.HookClientOptions{})
			var classes []retry.Class
			resp, err := client.Do(context.Background(), transport.HookRequest{Target: mustTarget(t, srv.URL+"/x"+tc.fragment),
				Accept: tc.accept, Observer: func(a transport.Attempt) { classes = append(classes, a.Class) }})
			if !slices.Equal(classes, tc.classes) {
				t.Fatalf("attempt classes %v, want %v", classes, tc.classes)
			}
			if !tc.wantErr {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var he *transport.HookError
			if !errors.As(err, &he) || he.Class != retry.Unparseable || he.Status != 200 || !errors.Is(err, transport.ErrBodyRejected) ||
				resp == nil || string(resp.Body) != "<html>oops</html>" {
				t.Fatalf("got %v (%#v), response %+v", err, he, resp)
			}
		})
	}
}

// docs/call-control.md §3, issue 13: a POST body is what JSON.stringify writes (no
// HTML escaping of & < >, U+2028 as it is, array-index keys first), signed over
// exactly those bytes, so that a verifier that re-serialises the parsed body, as the
// official SDK's middleware does, gets the bytes that were signed.
func TestHookBodyIsJSONStringifyOutput(t *testing.T) {
	t.Parallel()
	srv := transporttest.NewServer(t)
	client, _ := newHookClient(t, transport.HookClientOptions{})
	payload := map[string]any{"speech": "a <b> & c", "line": "x\u2028y", "customerData": map[string]any{"10": 1, "9": 2, "k": "&"}}
	if _, err := client.Do(context.Background(), transport.HookRequest{
		Target: mustTarget(t, srv.URL+"/call"), Payload: payload, Secret: "k",
	}); err != nil {
		t.Fatalf("Do: %v", err)
	}
	reqs := srv.RequestsTo("/call")
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	body := reqs[0].Body
	want := `{"customerData":{"9":2,"10":1,"k":"&"},"line":"x` + "\u2028" + `y","speech":"a <b> & c"}`
	if string(body) != want {
		t.Fatalf("body %s\nwant %s", body, want)
	}
	if err := webhooksig.VerifyJambonz("k", reqs[0].Header.Get("Jambonz-Signature"), []byte(want), time.Now(), time.Minute); err != nil {
		t.Fatalf("signature not over the JSON.stringify bytes: %v", err)
	}
}
