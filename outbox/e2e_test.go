package outbox_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/outbox"
	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
	"github.com/switchboard-voice/switchboard/transport/webhooksig"
)

// startLive starts an outbox of cfg on a fresh store that sends to rc; its store's
// writes and its Observe notify rc.changed.
func startLive(t *testing.T, rc *receiver, cfg outbox.Config) *outbox.Outbox {
	t.Helper()
	cfg.Store = watched(openStore(t), rc.changed)
	observe := cfg.Observe
	cfg.Observe = func(d outbox.Delivery, a outbox.Attempt) {
		if observe != nil {
			observe(d, a)
		}
		rc.changed.notify()
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = loopbackClient(rc)
	}
	if cfg.PollInterval == 0 {
		cfg.PollInterval = 50 * time.Millisecond
	}
	ob, err := outbox.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := ob.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := ob.Close(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return ob
}

// TestEndToEnd500500200: a real receiver answers 500, 500, then 200; the schedule is
// overridden to seconds. One SUCCEEDED delivery with three attempts whose signatures
// all verify, with the same webhook-id and different timestamps.
func TestEndToEnd500500200(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, true, func(n int, _ *http.Request) reply {
		if n < 2 {
			return reply{status: 500, body: `{"error":"busy"}`}
		}
		return reply{status: 200, body: `{"ok":true}`}
	})
	var (
		mu       sync.Mutex
		observed []string
	)
	ob := startLive(t, rc, outbox.Config{Observe: func(d outbox.Delivery, a outbox.Attempt) {
		mu.Lock()
		defer mu.Unlock()
		observed = append(observed, fmt.Sprintf("#%d %d: %s after %d", a.Number, a.Status, d.Status, d.Attempts))
	}})
	ctx := context.Background()
	ep, err := ob.CreateEndpoint(ctx, outbox.EndpointSpec{Account: "acct", URL: rc.srv.URL + "/hook",
		Events: []string{"call.status"}, APIVersion: "v1", Overrides: outbox.Overrides{ScheduleSeconds: []float64{1.2, 1.2}}}) // ≥ 1 s apart even with ±10 % jitter: timestamps are whole seconds
	if err != nil {
		t.Fatal(err)
	}
	pub, err := ob.Publish(ctx, outbox.Event{Account: "acct", Type: "call.status", Data: json.RawMessage(`{"callSid":"CA1"}`)})
	if err != nil || len(pub.Deliveries) != 1 {
		t.Fatalf("publish: %v %+v", err, pub)
	}
	id := pub.Deliveries[0].ID
	var d outbox.Delivery
	var attempts []outbox.Attempt
	waitFor(t, 20*time.Second, "the delivery to succeed", rc.changed, func() bool {
		d, attempts, err = ob.GetDelivery(ctx, "acct", id)
		return err == nil && d.Status.Finished()
	})
	if d.Status != outbox.DeliverySucceeded || len(attempts) != 3 {
		t.Fatalf("delivery %s with %d attempts", d.Status, len(attempts))
	}
	for i, want := range []int{500, 500, 200} {
		if attempts[i].Number != i+1 || attempts[i].Status != want {
			t.Fatalf("attempt %d: %+v", i, attempts[i])
		}
	}
	if attempts[2].Response != `{"ok":true}` || attempts[0].Class != outbox.ClassHTTP5xx {
		t.Fatalf("stored attempt %+v", attempts[2])
	}
	verifier, err := webhooksig.NewVerifier(ep.Secrets[0].Key)
	if err != nil {
		t.Fatal(err)
	}
	reqs := rc.requests()
	if len(reqs) != 3 {
		t.Fatalf("receiver got %d requests", len(reqs))
	}
	stamps := map[string]bool{}
	for i, r := range reqs {
		if err := verifier.Verify(r.header, r.body); err != nil {
			t.Fatalf("request %d: signature: %v", i, err)
		}
		if r.header.Get("webhook-id") != pub.Event.ID {
			t.Fatalf("request %d: webhook-id %q, want %q", i, r.header.Get("webhook-id"), pub.Event.ID)
		}
		stamps[r.header.Get("webhook-timestamp")] = true
		var body struct{ ID, Type, APIVersion string }
		if err := json.Unmarshal(r.body, &body); err != nil || body.ID != pub.Event.ID || body.APIVersion != "v1" {
			t.Fatalf("request %d: body %s", i, r.body)
		}
	}
	if len(stamps) != 3 {
		t.Fatalf("timestamps %v are not all different", stamps)
	}
	if got, _ := ob.GetEndpoint(ctx, "acct", ep.ID); got.Failures != 0 || got.LastDeliveryAt == nil {
		t.Fatalf("endpoint health after success: %+v", got)
	}
	// Observe sees each attempt as stored, with the delivery as it left it.
	waitFor(t, 5*time.Second, "Observe to see the last attempt", rc.changed, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(observed) == 3
	})
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"#1 500: PENDING after 1", "#2 500: PENDING after 2", "#3 200: SUCCEEDED after 3"}; !slices.Equal(observed, want) {
		t.Fatalf("Observe saw %q, want %q", observed, want)
	}
}

// TestSlowEndpointDoesNotDelayAnother: one endpoint hangs (each request for the
// receiver's 30 s, under a 60 s attempt timeout); the other answers at once, and all
// its deliveries succeed while no attempt of the slow one has ended: they never wait
// behind it. No wall-clock bound is asserted beyond the slow requests' own length.
func TestSlowEndpointDoesNotDelayAnother(t *testing.T) {
	t.Parallel()
	slow := newReceiver(t, false, func(int, *http.Request) reply { return reply{hang: true} })
	fast := newReceiver(t, false, status(204))
	ob := startLive(t, fast, outbox.Config{Workers: 16, ShutdownTimeout: 100 * time.Millisecond})
	ctx := context.Background()
	o := outbox.Overrides{AllowHTTP: ptr(true), TimeoutSeconds: ptr(60.0)}
	if _, err := ob.CreateEndpoint(ctx, outbox.EndpointSpec{Account: "a", URL: slow.srv.URL, Events: []string{"slow"}, Overrides: o}); err != nil {
		t.Fatal(err)
	}
	if _, err := ob.CreateEndpoint(ctx, outbox.EndpointSpec{Account: "a", URL: fast.srv.URL, Events: []string{"fast"}, Overrides: o}); err != nil {
		t.Fatal(err)
	}
	// The slow endpoint's backlog is published first, so it is due first.
	slowIDs := publishMany(t, ob, 40, "slow")
	ids := publishMany(t, ob, 20, "fast")
	waitFor(t, 30*time.Second, "the fast endpoint's deliveries", fast.changed, func() bool {
		for _, id := range ids {
			if d, _, _ := ob.GetDelivery(ctx, "a", id); d.Status != outbox.DeliverySucceeded {
				return false
			}
		}
		return true
	})
	for _, id := range slowIDs {
		if d, _, err := ob.GetDelivery(ctx, "a", id); err != nil || d.Status != outbox.DeliveryPending || d.Attempts != 0 {
			t.Fatalf("slow delivery %s is %s after %d attempts (%v) once the fast ones succeeded: want every slow attempt still in flight or waiting", id, d.Status, d.Attempts, err)
		}
	}
	if n := len(slow.requests()); n == 0 || n > 10 {
		t.Fatalf("slow endpoint got %d concurrent requests, want 1..10 (its in-flight cap)", n)
	}
}

// TestCloseReleasesInFlight: Close gives in-flight attempts the shutdown timeout, then
// cancels them and releases their deliveries without using an attempt. Close is safe
// before Start and twice.
func TestCloseReleasesInFlight(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, false, func(int, *http.Request) reply { return reply{hang: true} })
	st := openStore(t)
	ctx := context.Background()
	ob, err := outbox.Open(ctx, outbox.Config{Store: st, HTTPClient: loopbackClient(rc), ShutdownTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := ob.Close(ctx); err != nil { // before Start
		t.Fatal(err)
	}
	if err := ob.Start(ctx); err == nil {
		t.Fatal("Start after Close succeeded")
	}
	ob, err = outbox.Open(ctx, outbox.Config{Store: st, HTTPClient: loopbackClient(rc), ShutdownTimeout: 200 * time.Millisecond,
		PollInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ob.CreateEndpoint(ctx, outbox.EndpointSpec{Account: "a", URL: rc.srv.URL,
		Overrides: outbox.Overrides{AllowHTTP: ptr(true), TimeoutSeconds: ptr(30.0)}}); err != nil {
		t.Fatal(err)
	}
	pub, err := ob.Publish(ctx, outbox.Event{Account: "a", Type: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if err := ob.Start(ctx); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "the attempt to start", rc.changed, func() bool { return len(rc.requests()) == 1 })
	start := time.Now()
	if err := ob.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("Close took %v", took)
	}
	if err := ob.Close(ctx); err != nil { // twice
		t.Fatal(err)
	}
	d, as, err := st.GetDelivery(ctx, outboxdriver.GetDeliveryParams{Account: "a", ID: pub.Deliveries[0].ID})
	if err != nil || d.Status != outbox.DeliveryPending || d.Attempts != 0 || d.LeaseUntil != nil || len(as) != 0 {
		t.Fatalf("after Close: %+v %v %v", d, as, err)
	}
}

// TestCloseReleasesQueued: deliveries claimed but still waiting for a worker when
// Close begins are released unsent (no attempt used), while the attempt in flight
// finishes within the shutdown timeout and is recorded.
func TestCloseReleasesQueued(t *testing.T) {
	t.Parallel()
	var stopped <-chan struct{} // the outbox's, set before started is closed
	started := make(chan struct{})
	rc := newReceiver(t, false, func(_ int, r *http.Request) reply {
		<-started
		select { // answered once Close has stopped claiming: the others are queued then
		case <-stopped:
		case <-r.Context().Done():
		}
		return reply{status: http.StatusNoContent}
	})
	st := openStore(t)
	ctx := context.Background()
	ob, err := outbox.Open(ctx, outbox.Config{Store: st, HTTPClient: loopbackClient(rc), Workers: 1,
		ShutdownTimeout: 10 * time.Second, PollInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ob.CreateEndpoint(ctx, outbox.EndpointSpec{Account: "a", URL: rc.srv.URL,
		Overrides: outbox.Overrides{AllowHTTP: ptr(true)}}); err != nil {
		t.Fatal(err)
	}
	ids := publishMany(t, ob, 4, "x")
	if err := ob.Start(ctx); err != nil {
		t.Fatal(err)
	}
	stopped = ob.ClaimingStopped()
	close(started)
	waitFor(t, 5*time.Second, "the first attempt", rc.changed, func() bool { return len(rc.requests()) == 1 })
	if err := ob.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(rc.requests()); n != 1 {
		t.Fatalf("%d requests sent, want 1: queued deliveries must not start once Close has begun", n)
	}
	succeeded := 0
	for _, id := range ids {
		d, as, err := st.GetDelivery(ctx, outboxdriver.GetDeliveryParams{Account: "a", ID: id})
		switch {
		case err != nil:
			t.Fatal(err)
		case d.Status == outbox.DeliverySucceeded && len(as) == 1:
			succeeded++
		case d.Status != outbox.DeliveryPending || d.Attempts != 0 || d.LeaseUntil != nil || len(as) != 0:
			t.Fatalf("after Close: %+v %+v", d, as)
		}
	}
	if succeeded != 1 {
		t.Fatalf("%d deliveries succeeded, want the one in flight", succeeded)
	}
}

// TestRotateAndAPIVersionAtAttemptTime: each attempt uses the endpoint's values at
// attempt time: after a rotation both the old and the new secret verify, and a
// changed apiVersion shapes the next attempt.
func TestRotateAndAPIVersionAtAttemptTime(t *testing.T) {
	t.Parallel()
	h := newHarness(t, outbox.ProfileStandard, outbox.Overrides{ScheduleSeconds: []float64{1}, Jitter: ptr(0.0)}, status(500))
	d := h.publish()
	h.run()
	old := h.ep.Secrets[0].Key
	_, fresh, err := h.ob.RotateSecret(h.ctx, "acct", h.ep.ID, time.Hour, outbox.Actor{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.ob.UpdateEndpoint(h.ctx, "acct", h.ep.ID, outbox.EndpointUpdate{APIVersion: ptr("2027-01-01")}); err != nil {
		t.Fatal(err)
	}
	h.clock.Advance(time.Second)
	h.run()
	reqs := h.recv.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	for _, key := range []string{old, fresh} {
		if err := h.verify(key, reqs[1]); err != nil {
			t.Fatalf("after rotation, key %d: %v", len(key), err)
		}
	}
	var body struct{ APIVersion string }
	_ = json.Unmarshal(reqs[1].body, &body)
	if body.APIVersion != "2027-01-01" {
		t.Fatalf("second attempt rendered apiVersion %q", body.APIVersion)
	}
	// Past the grace period only the new secret signs.
	h.clock.Advance(2 * time.Hour)
	if d, _ = h.delivery(d.ID); d.Status != outbox.DeliveryFailed {
		t.Fatalf("delivery %s after its one-retry schedule", d.Status)
	}
	h.publish()
	h.run()
	last := h.recv.requests()[len(h.recv.requests())-1]
	if err := h.verify(old, last); err == nil {
		t.Fatal("the expired secret still signs")
	}
}

// TestSigningV1AndV1a: an endpoint holding a whsec_ secret and a whsk_ key gets both
// signatures on each attempt; a receiver with either the secret or the public key
// verifies it.
func TestSigningV1AndV1a(t *testing.T) {
	t.Parallel()
	h := newHarness(t, outbox.ProfileStandard, outbox.Overrides{}, status(204))
	secret := webhooksig.NewSecret()
	signing, public := webhooksig.NewKeyPair()
	ep, err := h.ob.CreateEndpoint(h.ctx, outbox.EndpointSpec{Account: "acct", URL: h.recv.srv.URL + "/both",
		Events: []string{"ping.both"}, Secrets: []string{secret, signing}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.ob.Publish(h.ctx, outbox.Event{Account: "acct", Type: "ping.both"}); err != nil {
		t.Fatal(err)
	}
	h.run()
	var reqs []received // the harness's own endpoint takes every type: keep this one's
	for _, r := range h.recv.requests() {
		if strings.Contains(r.header.Get("webhook-signature"), "v1a,") {
			reqs = append(reqs, r)
		}
	}
	if len(reqs) != 1 || ep.ID == "" {
		t.Fatalf("%d requests signed with v1a, want 1", len(reqs))
	}
	sig := reqs[0].header.Get("webhook-signature")
	if !strings.Contains(sig, "v1,") || !strings.Contains(sig, "v1a,") {
		t.Fatalf("webhook-signature %q lacks v1 or v1a", sig)
	}
	for _, key := range []string{secret, public} {
		if err := h.verify(key, reqs[0]); err != nil {
			t.Fatalf("verify with %.5s…: %v", key, err)
		}
	}
}

// TestRotateKeepsV1a: rotating an endpoint that signs with a whsk_ key (v1a) makes a
// new signing key, not an HMAC secret, and hands out its whpk_ public key; during the
// grace both keys sign, and a receiver holding either public key verifies.
func TestRotateKeepsV1a(t *testing.T) {
	t.Parallel()
	h := newHarness(t, outbox.ProfileStandard, outbox.Overrides{}, status(204))
	signing, oldPublic := webhooksig.NewKeyPair()
	ep, err := h.ob.CreateEndpoint(h.ctx, outbox.EndpointSpec{Account: "acct", URL: h.recv.srv.URL + "/v1a",
		Events: []string{"ping.v1a"}, Secrets: []string{signing}})
	if err != nil {
		t.Fatal(err)
	}
	ep, newPublic, err := h.ob.RotateSecret(h.ctx, "acct", ep.ID, time.Hour, outbox.Actor{})
	if err != nil || !strings.HasPrefix(newPublic, webhooksig.PublicKeyPrefix) || len(ep.Secrets) != 2 ||
		!strings.HasPrefix(ep.Secrets[0].Key, webhooksig.SigningKeyPrefix) {
		t.Fatalf("rotation: %v, shown %.5s…, %d keys", err, newPublic, len(ep.Secrets))
	}
	if _, err := h.ob.Publish(h.ctx, outbox.Event{Account: "acct", Type: "ping.v1a"}); err != nil {
		t.Fatal(err)
	}
	h.run()
	var got *received
	for _, r := range h.recv.requests() {
		if strings.Contains(r.header.Get("webhook-signature"), "v1a,") {
			got = &r
		}
	}
	if got == nil || strings.Count(got.header.Get("webhook-signature"), "v1a,") != 2 {
		t.Fatalf("want one request with two v1a signatures, got %+v", got)
	}
	for _, key := range []string{oldPublic, newPublic} {
		if err := h.verify(key, *got); err != nil {
			t.Fatalf("verify with %.5s…: %v", key, err)
		}
	}
}

// UpdateEndpoint with Secrets replaces the signing keys at once: the next attempt is
// signed with the new key only, the change is audited, and a bad key changes nothing.
func TestUpdateEndpointReplacesSecrets(t *testing.T) {
	t.Parallel()
	h := newHarness(t, outbox.ProfileStandard, outbox.Overrides{}, status(204))
	fresh := webhooksig.NewSecret()
	if _, err := h.ob.UpdateEndpoint(h.ctx, "acct", h.ep.ID, outbox.EndpointUpdate{Secrets: &[]string{"hunter2"}}); !errors.Is(err, outbox.ErrInvalid) {
		t.Fatalf("bad key: %v", err)
	}
	if _, err := h.ob.UpdateEndpoint(h.ctx, "acct", h.ep.ID, outbox.EndpointUpdate{Secrets: &[]string{}}); !errors.Is(err, outbox.ErrInvalid) {
		t.Fatalf("no key: %v", err)
	}
	ep, err := h.ob.UpdateEndpoint(h.ctx, "acct", h.ep.ID, outbox.EndpointUpdate{Secrets: &[]string{fresh}})
	if err != nil || len(ep.Secrets) != 1 || ep.Secrets[0].Key != fresh {
		t.Fatalf("update: %v, %d keys", err, len(ep.Secrets))
	}
	h.publish()
	h.run()
	reqs := h.recv.requests()
	last := reqs[len(reqs)-1]
	if n := strings.Count(last.header.Get("webhook-signature"), "v1,"); n != 1 {
		t.Fatalf("%d v1 signatures, want the new key's only", n)
	}
	for key, want := range map[string]bool{fresh: true, h.ep.Secrets[0].Key: false} {
		v, err := webhooksig.NewVerifier(key)
		if err != nil {
			t.Fatal(err)
		}
		v.Clock = h.clock
		if err := v.Verify(last.header, last.body); (err == nil) != want {
			t.Fatalf("verify with %.9s…: %v, want valid %v", key, err, want)
		}
	}
	if log, _ := h.ob.ListAudit(h.ctx, outbox.AuditQuery{Account: "acct", Limit: 10}); len(log) == 0 || log[0].Action != outbox.AuditRotated {
		t.Fatalf("audit %+v", log)
	}
}
