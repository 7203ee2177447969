package outbox_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/internal/testkit"
	"github.com/switchboard-voice/switchboard/outbox"
	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
	"github.com/switchboard-voice/switchboard/outbox/sqlitestore"
	"github.com/switchboard-voice/switchboard/transport"
)

// TestWorkersBoundAttempts: the claim loop and the completer (which claims with each
// batch it records) share the pool: no more than Config.Workers attempts run at once
// even when the endpoint's own cap is far higher, and every delivery arrives. The
// receiver answers the requests in groups of Workers, each group once it has all
// arrived, so the pool is full at every step and a worker beyond the bound would add
// a request to a group that waits.
func TestWorkersBoundAttempts(t *testing.T) {
	t.Parallel()
	const workers, events = 3, 60
	var (
		mu            sync.Mutex
		running, peak int
		groups        = map[int]chan struct{}{} // n/workers → closed once the group is in
	)
	rc := newReceiver(t, false, func(n int, r *http.Request) reply {
		mu.Lock()
		running++
		peak = max(peak, running)
		g, ok := groups[n/workers]
		if !ok {
			g = make(chan struct{})
			groups[n/workers] = g
		}
		if n%workers == workers-1 {
			close(g)
		}
		mu.Unlock()
		select {
		case <-g:
		case <-r.Context().Done():
		}
		mu.Lock()
		running--
		mu.Unlock()
		return reply{status: http.StatusNoContent}
	})
	ob := startLive(t, rc, outbox.Config{Workers: workers, BatchSize: 50})
	ctx := context.Background()
	if _, err := ob.CreateEndpoint(ctx, outbox.EndpointSpec{Account: "a", URL: rc.srv.URL,
		Overrides: outbox.Overrides{AllowHTTP: ptr(true), MaxInFlight: ptr(50)}}); err != nil {
		t.Fatal(err)
	}
	publishMany(t, ob, events, "call.status")
	waitFor(t, 20*time.Second, "every delivery", rc.changed, func() bool { return len(rc.requests()) >= events })
	mu.Lock()
	defer mu.Unlock()
	if peak != workers {
		t.Fatalf("%d attempts ran at once, want %d (Workers)", peak, workers)
	}
}

// TestQueuedJobWithShortLeaseIsReleased: a claimed delivery that waited for a worker
// until its lease no longer covers an attempt (timeout) and its recording is released
// unsent, with no attempt used and due again at once; one that waited briefly is sent.
func TestQueuedJobWithShortLeaseIsReleased(t *testing.T) {
	t.Parallel()
	// Lease 2 min (default), attempt timeout min(15 s, 1 min) = 15 s; a job needs
	// 15 s + 30 s of lease left when its worker takes it.
	h := newHarness(t, outbox.ProfileStandard, outbox.Overrides{}, status(http.StatusNoContent))
	d := h.publish()
	if _, err := h.ob.RunQueued(h.ctx, func() { h.clock.Advance(80 * time.Second) }); err != nil {
		t.Fatal(err)
	}
	got, attempts := h.delivery(d.ID)
	if n := len(h.recv.requests()); n != 0 || len(attempts) != 0 {
		t.Fatalf("released job: %d requests, %d attempts recorded, want none", n, len(attempts))
	}
	if got.Status != outbox.DeliveryPending || got.Attempts != 0 || got.LeaseUntil != nil || !got.NextAttemptAt.Equal(h.clock.Now()) {
		t.Fatalf("released delivery = %+v, want PENDING, 0 attempts, no lease, due now", got)
	}

	if _, err := h.ob.RunQueued(h.ctx, func() { h.clock.Advance(70 * time.Second) }); err != nil {
		t.Fatal(err)
	}
	if got, _ = h.delivery(d.ID); got.Status != outbox.DeliverySucceeded || len(h.recv.requests()) != 1 {
		t.Fatalf("after a 70 s wait (50 s of lease left): status %s, %d requests, want SUCCEEDED after 1", got.Status, len(h.recv.requests()))
	}
}

// TestDefaultClientKeepsAConnectionPerWorker: the default HTTP client keeps as many
// idle connections to a host as Workers, so that a busy endpoint's connections are
// reused from one burst to the next instead of being closed and dialled again.
func TestDefaultClientKeepsAConnectionPerWorker(t *testing.T) {
	t.Parallel()
	const workers = 24
	var (
		mu      sync.Mutex
		dialled int
		waiting int
		release = make(chan struct{})
	)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Hold each burst until all of it has arrived: every worker has its own
		// connection open at once.
		mu.Lock()
		waiting++
		ch := release
		if waiting == workers { // the last of its burst lets them all go
			waiting = 0
			close(release)
			release = make(chan struct{})
		}
		mu.Unlock()
		select {
		case <-ch:
		case <-time.After(5 * time.Second):
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			mu.Lock()
			dialled++
			mu.Unlock()
		}
	}
	srv.Start()
	defer srv.Close()
	loopback := transport.PublicOnly()
	loopback.AllowLoopback = true
	ctx := context.Background()
	changed := newSignal()
	ob, err := outbox.Open(ctx, outbox.Config{Store: watched(openStore(t), changed), Egress: &loopback, Workers: workers,
		PollInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ob.Close(ctx) }()
	if _, err := ob.CreateEndpoint(ctx, outbox.EndpointSpec{Account: "a", URL: srv.URL,
		Overrides: outbox.Overrides{AllowHTTP: ptr(true), MaxInFlight: ptr(workers)}}); err != nil {
		t.Fatal(err)
	}
	if err := ob.Start(ctx); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for burst := range 2 {
		ids = append(ids, publishMany(t, ob, workers, "x")...)
		waitFor(t, 20*time.Second, fmt.Sprintf("burst %d delivered", burst+1), changed, func() bool {
			for _, id := range ids {
				if d, _, err := ob.GetDelivery(ctx, "a", id); err != nil || d.Status != outbox.DeliverySucceeded {
					return false
				}
			}
			return true
		})
	}
	mu.Lock()
	defer mu.Unlock()
	if dialled > workers {
		t.Fatalf("%d connections dialled for two bursts of %d, want at most %d (reused)", dialled, workers, workers)
	}
}

// claimCounter is a store that counts the deliveries its claims return.
type claimCounter struct {
	outboxdriver.Store
	claimed atomic.Int64
}

func (c *claimCounter) Claim(ctx context.Context, p outboxdriver.ClaimParams) ([]outboxdriver.Job, error) {
	jobs, err := c.Store.Claim(ctx, p)
	c.claimed.Add(int64(len(jobs)))
	return jobs, err
}

func (c *claimCounter) CompleteClaim(ctx context.Context, p outboxdriver.CompleteClaimParams) ([]bool, []outboxdriver.Job, error) {
	applied, jobs, err := c.Store.CompleteClaim(ctx, p)
	c.claimed.Add(int64(len(jobs)))
	return applied, jobs, err
}

// TestPublishHandsOverToIdleWorkers: while workers are idle, a published delivery is
// leased as it is stored and goes to a worker with no claim; a delivery PublishTx
// stores (visible only at the caller's commit) is claimed as before.
func TestPublishHandsOverToIdleWorkers(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, false, status(http.StatusNoContent))
	st := &claimCounter{Store: openStore(t)}
	ctx := context.Background()
	ob := startWithEndpoint(t, outbox.Config{Store: st, HTTPClient: loopbackClient(rc), PollInterval: 20 * time.Millisecond}, rc)
	for i := range 5 {
		pub, err := ob.Publish(ctx, outbox.Event{Account: "a", Type: "x"})
		if err != nil {
			t.Fatal(err)
		}
		if pub.Deliveries[0].LeaseUntil == nil {
			t.Fatalf("publish %d: delivery not leased as stored, with idle workers", i)
		}
		waitFor(t, 10*time.Second, "the delivery", rc.changed, func() bool { return len(rc.requests()) == i+1 })
	}
	if n := st.claimed.Load(); n != 0 {
		t.Fatalf("%d deliveries came from claims, want none (handed over at publish)", n)
	}

	sqlStore := st.Store.(*sqlitestore.Store)
	tx, err := sqlStore.DB().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := ob.PublishTx(ctx, tx, outbox.Event{Account: "a", Type: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if pub.Deliveries[0].LeaseUntil != nil {
		t.Fatal("PublishTx leased its delivery before the caller committed")
	}
	waitFor(t, 10*time.Second, "the PublishTx delivery", rc.changed, func() bool { return len(rc.requests()) == 6 })
	if n := st.claimed.Load(); n != 1 {
		t.Fatalf("%d deliveries came from claims, want the PublishTx one", n)
	}
}

// TestHoldReleasesQueuedJobs: docs/outbox.md §3, a 429 under sajn (and standard) holds
// every delivery to the endpoint and uses one attempt of that delivery only.
// Deliveries of the endpoint already claimed and waiting for a worker when the 429
// comes back are released unsent: no request, no attempt used, still PENDING.
func TestHoldReleasesQueuedJobs(t *testing.T) {
	t.Parallel()
	const events = 5
	release := make(chan struct{})
	rc := newReceiver(t, false, func(n int, _ *http.Request) reply {
		if n == 0 {
			<-release // answered once the others are claimed and queued
			return reply{status: http.StatusTooManyRequests, headers: map[string]string{"Retry-After": "3600"}}
		}
		return reply{status: http.StatusNoContent}
	})
	ob := startLive(t, rc, outbox.Config{Workers: 1})
	ctx := context.Background()
	if _, err := ob.CreateEndpoint(ctx, outbox.EndpointSpec{Account: "a", URL: rc.srv.URL, Profile: outbox.ProfileSajn}); err != nil {
		t.Fatal(err)
	}
	ids := publishMany(t, ob, events, "call.status")
	leased := func() int {
		n := 0
		for _, id := range ids {
			if d, _, err := ob.GetDelivery(ctx, "a", id); err == nil && d.LeaseUntil != nil {
				n++
			}
		}
		return n
	}
	waitFor(t, 10*time.Second, "every delivery claimed", rc.changed, func() bool { return leased() == events })
	close(release)
	waitFor(t, 10*time.Second, "the queued deliveries released", rc.changed, func() bool { return leased() == 0 })
	if n := len(rc.requests()); n != 1 {
		t.Fatalf("receiver got %d requests, want only the one answered 429", n)
	}
	throttled := 0
	for _, id := range ids {
		d, attempts, err := ob.GetDelivery(ctx, "a", id)
		if err != nil {
			t.Fatal(err)
		}
		if d.Status != outbox.DeliveryPending {
			t.Errorf("delivery %s is %s, want PENDING (held)", id, d.Status)
		}
		switch len(attempts) {
		case 0:
		case 1:
			throttled++
		default:
			t.Errorf("delivery %s used %d attempts", id, len(attempts))
		}
	}
	if throttled != 1 {
		t.Fatalf("%d deliveries used an attempt, want 1", throttled)
	}
}

// TestRedirectsNeverFollowedWhateverTheClient: a caller's own HTTP client, which
// would follow redirects, does not: the 3xx is the attempt's answer (docs/outbox.md §2).
func TestRedirectsNeverFollowedWhateverTheClient(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, false, func(_ int, r *http.Request) reply {
		if r.URL.Path == "/moved" {
			return reply{status: http.StatusNoContent}
		}
		return reply{status: http.StatusFound, headers: map[string]string{"Location": "/moved"}}
	})
	own := &http.Client{} // follows redirects by default
	st := openStore(t)
	ob, err := outbox.Open(context.Background(), outbox.Config{Store: st, HTTPClient: own, Clock: testkit.NewClock()})
	if err != nil {
		t.Fatal(err)
	}
	defer ob.Close(context.Background())
	ctx := context.Background()
	if _, err := ob.CreateEndpoint(ctx, outbox.EndpointSpec{Account: "a", URL: rc.srv.URL + "/hook",
		Overrides: outbox.Overrides{AllowHTTP: ptr(true)}}); err != nil {
		t.Fatal(err)
	}
	_, attempts := sendOne(t, ob, "a")
	if len(attempts) != 1 || attempts[0].Status != http.StatusFound || attempts[0].Class != outbox.ClassRedirect || len(rc.requests()) != 1 {
		t.Fatalf("attempts %+v, %d requests: want one 302 recorded as redirect, not followed", attempts, len(rc.requests()))
	}
	if own.CheckRedirect != nil {
		t.Fatal("the caller's client was changed")
	}
}

// countingTransport counts the requests it carries.
type countingTransport struct {
	n    atomic.Int32
	base http.RoundTripper
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.base.RoundTrip(r)
}

// HTTPClientFor picks the client of each attempt by its endpoint; nil means
// HTTPClient; a chosen client follows no redirect either.
func TestHTTPClientForPicksEachEndpointsClient(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, false, func(_ int, r *http.Request) reply {
		if r.URL.Path == "/moved" {
			return reply{status: http.StatusNoContent}
		}
		return reply{status: http.StatusFound, headers: map[string]string{"Location": "/moved"}}
	})
	def := &countingTransport{base: http.DefaultTransport}
	managed := &countingTransport{base: http.DefaultTransport}
	managedClient := &http.Client{Transport: managed} // follows redirects by default
	ob, err := outbox.Open(context.Background(), outbox.Config{Store: openStore(t), HTTPClient: &http.Client{Transport: def},
		HTTPClientFor: func(ep outbox.Endpoint) *http.Client {
			if ep.Managed {
				return managedClient
			}
			return nil
		}, Clock: testkit.NewClock()})
	if err != nil {
		t.Fatal(err)
	}
	defer ob.Close(context.Background())
	ctx := context.Background()
	for _, m := range []bool{true, false} {
		if _, err := ob.CreateEndpoint(ctx, outbox.EndpointSpec{Account: "a", URL: rc.srv.URL + "/hook", Managed: m,
			Overrides: outbox.Overrides{AllowHTTP: ptr(true)}}); err != nil {
			t.Fatal(err)
		}
	}
	pub, err := ob.Publish(ctx, outbox.Event{Account: "a", Type: "t", Data: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ob.RunDue(ctx); err != nil {
		t.Fatal(err)
	}
	if d, m := def.n.Load(), managed.n.Load(); d != 1 || m != 1 {
		t.Fatalf("requests through the default client %d, the managed endpoint's %d; want 1 each", d, m)
	}
	for _, d := range pub.Deliveries {
		if _, as, err := ob.GetDelivery(ctx, "a", d.ID); err != nil || len(as) != 1 || as[0].Status != http.StatusFound {
			t.Errorf("delivery %s: %+v, %v; want one 302, not followed", d.ID, as, err)
		}
	}
	if managedClient.CheckRedirect != nil {
		t.Error("the caller's client was changed")
	}
}
