package outbox_test

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/switchboard-voice/switchboard/internal/testkit"
	"github.com/switchboard-voice/switchboard/outbox"
	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
	"github.com/switchboard-voice/switchboard/outbox/sqlitestore"
	"github.com/switchboard-voice/switchboard/transport"
	"github.com/switchboard-voice/switchboard/transport/webhooksig"
)

// reply is what the receiver answers to one request.
type reply struct {
	status  int
	headers map[string]string
	body    string
	// hang keeps the request open until the client gives up.
	hang bool
}

// received is one request the receiver got.
type received struct {
	method string
	url    *url.URL
	header http.Header
	body   []byte
	at     time.Time
}

// receiver is a real HTTP(S) server on loopback that answers from a script.
type receiver struct {
	srv    *httptest.Server
	mu     sync.Mutex
	got    []received
	script func(n int, r *http.Request) reply
	// changed is notified after each request is recorded; startLive's outboxes
	// notify it too after every write of their store and every Observe.
	changed signal
}

func newReceiver(t *testing.T, tlsOn bool, script func(n int, r *http.Request) reply) *receiver {
	t.Helper()
	rc := &receiver{script: script, changed: newSignal()}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		n := len(rc.got)
		rc.got = append(rc.got, received{method: r.Method, url: r.URL, header: r.Header.Clone(), body: body, at: time.Now()})
		script := rc.script
		rc.mu.Unlock()
		rc.changed.notify()
		rep := reply{status: http.StatusNoContent}
		if script != nil {
			rep = script(n, r)
		}
		if rep.hang {
			select {
			case <-r.Context().Done():
			case <-time.After(30 * time.Second):
			}
			// Never answer, not even the 200 a returning handler implies: the client's
			// TLS close_notify as it gives up ends r's context, and that 200 could reach
			// it before its socket is closed, a success where no answer was due.
			panic(http.ErrAbortHandler)
		}
		for k, v := range rep.headers {
			w.Header().Set(k, v)
		}
		w.WriteHeader(rep.status)
		_, _ = io.WriteString(w, rep.body)
	})
	rc.srv = httptest.NewUnstartedServer(h)
	rc.srv.Config.ErrorLog = log.New(io.Discard, "", 0) // clients that give up are expected
	if tlsOn {
		rc.srv.StartTLS()
	} else {
		rc.srv.Start()
	}
	t.Cleanup(rc.srv.Close)
	return rc
}

// signal wakes a waiter without blocking whoever notifies it: notices that come
// before the waiter looks count as one, enough for a waiter that checks its
// condition again on each (waitFor).
type signal chan struct{}

func newSignal() signal { return make(signal, 1) }

func (s signal) notify() {
	select {
	case s <- struct{}{}:
	default:
	}
}

// waitFor checks cond again each time s is notified, until it holds; at the generous
// deadline it fails the test. Whatever makes cond true must notify s after it.
func waitFor(t *testing.T, within time.Duration, what string, s signal, cond func() bool) {
	t.Helper()
	deadline := time.NewTimer(within)
	defer deadline.Stop()
	for !cond() {
		select {
		case <-s:
		case <-deadline.C:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// watchedStore notifies changed after every write of the store it wraps returns, so
// that a test waiting for a state of the store (waitFor) is woken when it may hold.
type watchedStore struct {
	outboxdriver.Store
	changed signal
}

func watched(st outboxdriver.Store, changed signal) watchedStore { return watchedStore{st, changed} }

func (w watchedStore) Publish(ctx context.Context, p outboxdriver.PublishParams) (outboxdriver.Published, error) {
	defer w.changed.notify()
	return w.Store.Publish(ctx, p)
}

func (w watchedStore) Claim(ctx context.Context, p outboxdriver.ClaimParams) ([]outboxdriver.Job, error) {
	defer w.changed.notify()
	return w.Store.Claim(ctx, p)
}

func (w watchedStore) Complete(ctx context.Context, cs []outboxdriver.Completion) ([]bool, error) {
	defer w.changed.notify()
	return w.Store.Complete(ctx, cs)
}

func (w watchedStore) CompleteClaim(ctx context.Context, p outboxdriver.CompleteClaimParams) ([]bool, []outboxdriver.Job, error) {
	defer w.changed.notify()
	return w.Store.CompleteClaim(ctx, p)
}

func (w watchedStore) Reap(ctx context.Context, p outboxdriver.ReapParams) (int, error) {
	defer w.changed.notify()
	return w.Store.Reap(ctx, p)
}

func (rc *receiver) requests() []received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]received(nil), rc.got...)
}

func (rc *receiver) setScript(s func(n int, r *http.Request) reply) {
	rc.mu.Lock()
	rc.script = s
	rc.mu.Unlock()
}

// loopbackRules allow loopback, which the outbox's default rules refuse.
func loopbackRules() *transport.EgressRules {
	r := transport.PublicOnly()
	r.AllowLoopback = true
	return &r
}

// loopbackClient trusts the receiver's test certificate and allows loopback.
func loopbackClient(rc *receiver) *http.Client {
	var tlsConf *tls.Config
	if tc, ok := rc.srv.Client().Transport.(*http.Transport); ok && tc.TLSClientConfig != nil {
		tlsConf = tc.TLSClientConfig.Clone()
	}
	return transport.NewHTTPClient(*loopbackRules(), transport.ClientOptions{TLSConfig: tlsConf})
}

func openStore(t testing.TB) *sqlitestore.Store {
	t.Helper()
	st, err := sqlitestore.Open(context.Background(), filepath.Join(t.TempDir(), "outbox.db"), sqlitestore.Options{Synchronous: os.Getenv("OUTBOX_SYNC")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// harness is one outbox on a fresh database, an injected clock and one receiver,
// driven step by step with RunDue.
type harness struct {
	t       *testing.T
	ctx     context.Context
	clock   *testkit.Clock
	store   *sqlitestore.Store
	ob      *outbox.Outbox
	recv    *receiver
	ep      outbox.Endpoint
	notices []outbox.Notice
	// logs holds what the outbox logged, one JSON object per line.
	logs testkit.SyncBuffer
	mu   sync.Mutex
}

func newHarness(t *testing.T, profile string, o outbox.Overrides, script func(n int, r *http.Request) reply) *harness {
	t.Helper()
	h := &harness{t: t, ctx: context.Background(), clock: testkit.NewClock(), store: openStore(t)}
	h.recv = newReceiver(t, true, script)
	ob, err := outbox.Open(h.ctx, outbox.Config{
		Store: h.store, Clock: h.clock, HTTPClient: loopbackClient(h.recv),
		Notify: func(n outbox.Notice) { h.mu.Lock(); h.notices = append(h.notices, n); h.mu.Unlock() },
		Logger: zerolog.New(&h.logs),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ob.Close(context.Background()) })
	h.ob = ob
	h.ep = h.endpoint(profile, o)
	return h
}

func (h *harness) endpoint(profile string, o outbox.Overrides) outbox.Endpoint {
	h.t.Helper()
	ep, err := h.ob.CreateEndpoint(h.ctx, outbox.EndpointSpec{
		Account: "acct", URL: h.recv.srv.URL + "/hook", APIVersion: "2026-01-01", Profile: profile, Overrides: o,
	})
	if err != nil {
		h.t.Fatal(err)
	}
	return ep
}

// publish publishes one event and returns its delivery to h.ep.
func (h *harness) publish() outbox.Delivery {
	h.t.Helper()
	pub, err := h.ob.Publish(h.ctx, outbox.Event{Account: "acct", Type: "call.status", Data: json.RawMessage(`{"n":1}`)})
	if err != nil {
		h.t.Fatal(err)
	}
	for _, d := range pub.Deliveries {
		if d.EndpointID == h.ep.ID {
			return d
		}
	}
	h.t.Fatalf("no delivery for endpoint %s", h.ep.ID)
	return outbox.Delivery{}
}

// publishMany publishes n events of type typ to account a and returns the id of each
// one's first delivery, in order of publishing.
func publishMany(t *testing.T, ob *outbox.Outbox, n int, typ string) []string {
	t.Helper()
	ids := make([]string, 0, n)
	for range n {
		pub, err := ob.Publish(context.Background(), outbox.Event{Account: "a", Type: typ})
		if err != nil {
			t.Fatal(err)
		}
		if len(pub.Deliveries) == 0 {
			t.Fatalf("event %s made no delivery", pub.Event.ID)
		}
		ids = append(ids, pub.Deliveries[0].ID)
	}
	return ids
}

// sendOne publishes an event to account, runs what is due, and returns the event's
// first delivery with its attempts.
func sendOne(t *testing.T, ob *outbox.Outbox, account string) (outbox.Delivery, []outbox.Attempt) {
	t.Helper()
	ctx := context.Background()
	pub, err := ob.Publish(ctx, outbox.Event{Account: account, Type: "call.status", Data: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ob.RunDue(ctx); err != nil {
		t.Fatal(err)
	}
	d, as, err := ob.GetDelivery(ctx, account, pub.Deliveries[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	return d, as
}

// verify checks the signatures of r with key (a secret or a public key) at the
// harness's time.
func (h *harness) verify(key string, r received) error {
	h.t.Helper()
	v, err := webhooksig.NewVerifier(key)
	if err != nil {
		h.t.Fatal(err)
	}
	v.Clock = h.clock
	return v.Verify(r.header, r.body)
}

// run attempts everything due now.
func (h *harness) run() int {
	h.t.Helper()
	return h.runOn(h.ob)
}

// runOn attempts everything due now with ob and returns how many.
func (h *harness) runOn(ob *outbox.Outbox) int {
	h.t.Helper()
	n, err := ob.RunDue(h.ctx)
	if err != nil {
		h.t.Fatal(err)
	}
	return n
}

// another opens a second outbox of cfg on the harness's store (unless cfg has its
// own) and clock, closed when the test ends.
func (h *harness) another(cfg outbox.Config) *outbox.Outbox {
	h.t.Helper()
	if cfg.Store == nil {
		cfg.Store = h.store
	}
	cfg.Clock = h.clock
	ob, err := outbox.Open(h.ctx, cfg)
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { _ = ob.Close(context.Background()) })
	return ob
}

func (h *harness) delivery(id string) (outbox.Delivery, []outbox.Attempt) {
	h.t.Helper()
	d, as, err := h.ob.GetDelivery(h.ctx, "acct", id)
	if err != nil {
		h.t.Fatal(err)
	}
	return d, as
}

func (h *harness) endpointNow() outbox.Endpoint {
	h.t.Helper()
	ep, err := h.store.GetEndpoint(h.ctx, outboxdriver.GetEndpointParams{Account: "acct", ID: h.ep.ID})
	if err != nil {
		h.t.Fatal(err)
	}
	return ep
}

// waitsOf drives one delivery to its end with the given answers and returns the waits
// between consecutive attempts and the attempts made, advancing the clock to each
// next attempt.
func (h *harness) drive(id string, maxSteps int) (waits []time.Duration, d outbox.Delivery) {
	h.t.Helper()
	for range maxSteps {
		if h.run() == 0 {
			h.t.Fatalf("nothing due at %v", h.clock.Now())
		}
		d, _ = h.delivery(id)
		if d.Status != outbox.DeliveryPending {
			return waits, d
		}
		wait := d.NextAttemptAt.Sub(h.clock.Now())
		waits = append(waits, wait)
		h.clock.Set(d.NextAttemptAt)
	}
	return waits, d
}

// startWithEndpoint opens an outbox of cfg with an endpoint of account "a" at rc (plain
// HTTP allowed) and starts it; it is closed when the test ends.
func startWithEndpoint(t *testing.T, cfg outbox.Config, rc *receiver) *outbox.Outbox {
	t.Helper()
	ctx := context.Background()
	ob, err := outbox.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ob.Close(ctx) })
	if _, err := ob.CreateEndpoint(ctx, outbox.EndpointSpec{Account: "a", URL: rc.srv.URL,
		Overrides: outbox.Overrides{AllowHTTP: ptr(true)}}); err != nil {
		t.Fatal(err)
	}
	if err := ob.Start(ctx); err != nil {
		t.Fatal(err)
	}
	return ob
}

func status(code int) func(int, *http.Request) reply {
	return func(int, *http.Request) reply { return reply{status: code} }
}

// failFirstThen answers the first request 500 and every later one code.
func failFirstThen(code int) func(int, *http.Request) reply {
	return func(n int, _ *http.Request) reply {
		if n == 0 {
			return reply{status: http.StatusInternalServerError}
		}
		return reply{status: code}
	}
}

func ptr[T any](v T) *T { return &v }
