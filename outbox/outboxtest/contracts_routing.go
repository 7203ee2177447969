package outboxtest

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
)

// testRoutingFields: an endpoint's headers, channels, filter and rate limit are kept
// as written, by creation and by UpdateEndpoint, and read back alike by every read
// (a claim's job included); an event's channels are kept, and the exclusions
// Exclude names for the endpoints Plan gave nothing are recorded with it, read by
// GetEvent, ListEvents and a duplicate publish.
func testRoutingFields(t *testing.T, b Bundle) {
	s := b.Store
	ep := endpoint("ep_a", "acct")
	ep.Headers = map[string]string{"Authorization": "Bearer abc", "X-Tenant": "t1"}
	ep.Channels = []string{"eu", "project:7"}
	ep.Filter = json.RawMessage(`{"amount":{"$gt":10}}`)
	ep.RateLimit = 7
	plain := endpoint("ep_b", "acct")
	mustCreate(t, s, ep, plain)
	check := func(what string, got outboxdriver.Endpoint, want outboxdriver.Endpoint) {
		t.Helper()
		if !reflect.DeepEqual(got.Headers, want.Headers) || !reflect.DeepEqual(got.Channels, want.Channels) ||
			string(got.Filter) != string(want.Filter) || got.RateLimit != want.RateLimit {
			t.Fatalf("%s: headers %v channels %v filter %s rate %d, want %v %v %s %d", what, got.Headers, got.Channels,
				got.Filter, got.RateLimit, want.Headers, want.Channels, want.Filter, want.RateLimit)
		}
	}
	got, err := s.GetEndpoint(ctx, outboxdriver.GetEndpointParams{Account: "acct", ID: "ep_a"})
	if err != nil {
		t.Fatal(err)
	}
	check("get", got, ep)
	got, err = s.GetEndpoint(ctx, outboxdriver.GetEndpointParams{Account: "acct", ID: "ep_b"})
	if err != nil {
		t.Fatal(err)
	}
	check("get of an endpoint without them", got, plain)
	if got.Headers != nil || got.Channels != nil || got.Filter != nil {
		t.Fatalf("none read back as %#v %#v %#v, want nil", got.Headers, got.Channels, got.Filter)
	}

	changed := ep
	changed.Headers = map[string]string{"X-Tenant": "t2"}
	changed.Channels = nil
	changed.Filter = nil
	changed.RateLimit = 0
	if _, err := s.UpdateEndpoint(ctx, outboxdriver.UpdateEndpointParams{Account: "acct", ID: "ep_a",
		Change: func(cur outboxdriver.Endpoint) (outboxdriver.Change, error) {
			check("the change's endpoint", cur, ep)
			return outboxdriver.Change{At: t0, Endpoint: &changed}, nil
		}}); err != nil {
		t.Fatal(err)
	}
	eps, err := s.ListEndpoints(ctx, "acct")
	if err != nil || len(eps) != 2 {
		t.Fatalf("list: %v %v", eps, err)
	}
	check("list after the update", eps[0], changed)

	ev := outboxdriver.Event{ID: "evt_1", Account: "acct", Type: "call.status", CreatedAt: t0, Data: json.RawMessage(`{"n":1}`),
		Channels: []string{"eu"}}
	all := planAll(ev, t0)
	params := outboxdriver.PublishParams{Event: ev, Now: t0,
		Plan: func(ep outboxdriver.Endpoint) (outboxdriver.Delivery, *outboxdriver.Attempt, bool) {
			d, a, _ := all(ep)
			return d, a, ep.ID == "ep_a"
		},
		Exclude: func(ep outboxdriver.Endpoint) string {
			if ep.ID == "ep_a" {
				t.Error("Exclude asked about an endpoint Plan gave a delivery")
			}
			return outboxdriver.ExcludedByFilter
		}}
	pub, err := s.Publish(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	wantExcluded := []outboxdriver.Exclusion{{EndpointID: "ep_b", Reason: outboxdriver.ExcludedByFilter}}
	if len(pub.Deliveries) != 1 || !reflect.DeepEqual(pub.Event.Excluded, wantExcluded) {
		t.Fatalf("published %v excluded %v", deliveryIDs(pub.Deliveries), pub.Event.Excluded)
	}
	stored, err := s.GetEvent(ctx, outboxdriver.GetEventParams{Account: "acct", ID: "evt_1"})
	if err != nil || !reflect.DeepEqual(stored.Channels, ev.Channels) || !reflect.DeepEqual(stored.Excluded, wantExcluded) {
		t.Fatalf("stored event channels %v excluded %v, %v", stored.Channels, stored.Excluded, err)
	}
	evs, err := s.ListEvents(ctx, outboxdriver.EventQuery{Account: "acct", Limit: 10})
	if err != nil || len(evs) != 1 || !reflect.DeepEqual(evs[0].Excluded, wantExcluded) {
		t.Fatalf("listed %+v, %v", evs, err)
	}
	dup, err := s.Publish(ctx, params)
	if err != nil || !dup.Duplicate || !reflect.DeepEqual(dup.Event.Excluded, wantExcluded) || !reflect.DeepEqual(dup.Event.Channels, ev.Channels) {
		t.Fatalf("duplicate %+v, %v", dup.Event, err)
	}
	jobs := claim(t, s, t0, 10, "tok")
	if len(jobs) != 1 || !reflect.DeepEqual(jobs[0].Event.Channels, ev.Channels) {
		t.Fatalf("claimed %v", jobIDs(jobs))
	}
	check("a claim's endpoint", jobs[0].Endpoint, changed)
}

// keyParams is a publish of event id with an idempotency key.
func keyParams(account, id, key, fingerprint string, now time.Time) outboxdriver.PublishParams {
	ev := outboxdriver.Event{ID: id, Account: account, Type: "call.status", CreatedAt: now, Data: json.RawMessage(`{"n":1}`)}
	return outboxdriver.PublishParams{Event: ev, Now: now, Plan: planAll(ev, now), IdempotencyKey: key, Fingerprint: fingerprint,
		KeySince: now.Add(-24 * time.Hour)}
}

// testIdempotencyKeys: a key publishes once per account; the same key with the same
// fingerprint answers the event it published (Duplicate) and writes nothing, with
// another fingerprint fails with ErrConflict and writes nothing; a key older than
// KeySince, or whose event was purged, publishes anew; another account's key is
// another key; Purge deletes keys stored before KeysBefore.
func testIdempotencyKeys(t *testing.T, b Bundle) {
	s := b.Store
	mustCreate(t, s, endpoint("ep_a", "acct"), endpoint("ep_x", "other"))
	first, err := s.Publish(ctx, keyParams("acct", "evt_1", "order-1", "fp1", t0))
	if err != nil || first.Duplicate || len(first.Deliveries) != 1 {
		t.Fatalf("first: %+v %v", first, err)
	}
	before := takeSnapshot(t, s, "acct")
	again, err := s.Publish(ctx, keyParams("acct", "evt_2", "order-1", "fp1", t0.Add(time.Hour)))
	if err != nil || !again.Duplicate || again.Event.ID != "evt_1" || deliveryIDs(again.Deliveries)[0] != first.Deliveries[0].ID {
		t.Fatalf("same key and fingerprint: %+v %v", again, err)
	}
	_, err = s.Publish(ctx, keyParams("acct", "evt_3", "order-1", "fp2", t0.Add(time.Hour)))
	if !errors.Is(err, outboxdriver.ErrConflict) {
		t.Fatalf("another fingerprint: %v, want ErrConflict", err)
	}
	requireUnchanged(t, s, "acct", before, "a replayed or conflicting key")
	if pub, err := s.Publish(ctx, keyParams("other", "evt_1", "order-1", "fp9", t0)); err != nil || pub.Duplicate {
		t.Fatalf("the key in another account: %+v %v", pub, err)
	}
	// A day later the key is free again: KeySince is after it was stored.
	later := t0.Add(25 * time.Hour)
	if pub, err := s.Publish(ctx, keyParams("acct", "evt_4", "order-1", "fp2", later)); err != nil || pub.Duplicate || pub.Event.ID != "evt_4" {
		t.Fatalf("an expired key: %+v %v", pub, err)
	}
	if pub, err := s.Publish(ctx, keyParams("acct", "evt_5", "order-1", "fp2", later.Add(time.Minute))); err != nil || !pub.Duplicate || pub.Event.ID != "evt_4" {
		t.Fatalf("the key taken again answers its new event: %+v %v", pub, err)
	}
	// A key whose event is gone publishes anew.
	if _, err := s.Publish(ctx, keyParams("acct", "evt_6", "order-2", "fp", t0)); err != nil {
		t.Fatal(err)
	}
	for {
		d, e, err := s.Purge(ctx, outboxdriver.PurgeParams{Before: t0.Add(time.Minute), Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		if d == 0 && e == 0 {
			break
		}
	}
	if _, err := s.GetEvent(ctx, outboxdriver.GetEventParams{Account: "acct", ID: "evt_6"}); !errors.Is(err, outboxdriver.ErrNotFound) {
		t.Fatalf("evt_6 not purged: %v", err)
	}
	if pub, err := s.Publish(ctx, keyParams("acct", "evt_7", "order-2", "fp", t0.Add(time.Hour))); err != nil || pub.Duplicate || pub.Event.ID != "evt_7" {
		t.Fatalf("a key whose event was purged: %+v %v", pub, err)
	}
	// Purge deletes the keys stored before KeysBefore: order-2 (stored at t0+1h) goes,
	// order-1 (stored again at t0+25h) stays.
	if _, _, err := s.Purge(ctx, outboxdriver.PurgeParams{Before: t0, Limit: 100, KeysBefore: t0.Add(2 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if pub, err := s.Publish(ctx, keyParams("acct", "evt_8", "order-2", "fp-other", t0.Add(3*time.Hour))); err != nil || pub.Duplicate {
		t.Fatalf("a purged key: %+v %v", pub, err)
	}
	if _, err := s.Publish(ctx, keyParams("acct", "evt_9", "order-1", "fp-other", later.Add(time.Hour))); !errors.Is(err, outboxdriver.ErrConflict) {
		t.Fatalf("a key Purge kept: %v", err)
	}
}

// testIdempotencyKeyConcurrent: publishes of one key at once publish one event; every
// one of them answers it.
func testIdempotencyKeyConcurrent(t *testing.T, b Bundle) {
	s := b.Store
	mustCreate(t, s, endpoint("ep_a", "acct"))
	const n = 8
	var wg sync.WaitGroup
	got := make([]outboxdriver.Published, n)
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i], errs[i] = s.Publish(ctx, keyParams("acct", fmt.Sprintf("evt_%d", i), "order-1", "fp", t0))
		}()
	}
	wg.Wait()
	ids := map[string]bool{}
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("publish %d: %v", i, errs[i])
		}
		ids[got[i].Event.ID] = true
	}
	evs, err := s.ListEvents(ctx, outboxdriver.EventQuery{Account: "acct", Limit: 100})
	if err != nil || len(evs) != 1 || len(ids) != 1 || !ids[evs[0].ID] {
		t.Fatalf("stored %v, answered %v, %v", eventIDs(evs), ids, err)
	}
}

// testClaimRateLimit: a claim takes no more of an endpoint with a RateLimit than its
// bucket holds (outboxdriver.RateRoom at the claim's time) and takes them from it
// (RateAfter), across claims, CompleteClaim's included; other endpoints are not
// limited; a delivery planned leased for a rate-limited endpoint is stored unleased.
func testClaimRateLimit(t *testing.T, b Bundle) {
	s := b.Store
	limited := endpoint("ep_rate", "acct")
	limited.RateLimit = 2
	mustCreate(t, s, limited, endpoint("ep_free", "acct"))
	for i := range 6 {
		ev := outboxdriver.Event{ID: fmt.Sprintf("evt_%d", i), Account: "acct", Type: "call.status", CreatedAt: t0, Data: json.RawMessage(`{}`)}
		lease := t0.Add(time.Minute)
		pub, err := s.Publish(ctx, outboxdriver.PublishParams{Event: ev, Now: t0, Plan: leasingPlan(ev, t0, lease)})
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range pub.Deliveries {
			if d.EndpointID == "ep_rate" && d.LeaseUntil != nil {
				t.Fatalf("a rate-limited endpoint's delivery was leased at publish")
			}
		}
	}
	count := func(jobs []outboxdriver.Job) (rate, free int) {
		for _, j := range jobs {
			if j.Endpoint.ID == "ep_rate" {
				rate++
			} else {
				free++
			}
		}
		return
	}
	// At t0 the bucket is full: two of ep_rate's, none of ep_free's (all leased at
	// publish).
	if r, _ := count(claim(t, s, t0, 100, "c1")); r != 2 {
		t.Fatalf("first claim took %d of the limited endpoint, want 2", r)
	}
	if r, _ := count(claim(t, s, t0, 100, "c2")); r != 0 {
		t.Fatalf("second claim at the same time took %d, want 0", r)
	}
	if r, _ := count(claim(t, s, t0.Add(499*time.Millisecond), 100, "c3")); r != 0 {
		t.Fatalf("a claim before a token refilled took %d, want 0", r)
	}
	if r, _ := count(claim(t, s, t0.Add(500*time.Millisecond), 100, "c4")); r != 1 {
		t.Fatalf("a claim after one token refilled took %d, want 1", r)
	}
	_, jobs, err := s.CompleteClaim(ctx, outboxdriver.CompleteClaimParams{Next: outboxdriver.ClaimParams{Now: t0.Add(time.Second),
		LeaseUntil: t0.Add(time.Minute), Limit: 100, Token: "c5"}})
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := count(jobs); r != 1 {
		t.Fatalf("CompleteClaim's claim a token later took %d, want 1", r)
	}
	if r, _ := count(claim(t, s, t0.Add(10*time.Second), 100, "c6")); r != 2 {
		t.Fatalf("a claim with a full bucket took %d, want the 2 left", r)
	}
}

// testClaimRateLimitConcurrent: claims at once at one time take no more of a
// rate-limited endpoint than its bucket holds, however many run.
func testClaimRateLimitConcurrent(t *testing.T, b Bundle) {
	s := b.Store
	limited := endpoint("ep_rate", "acct")
	limited.RateLimit = 3
	limited.InFlightCap = 100
	mustCreate(t, s, limited)
	for i := range 20 {
		publish(t, s, "acct", fmt.Sprintf("evt_%d", i), t0)
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		total int
	)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			jobs, err := s.Claim(ctx, outboxdriver.ClaimParams{Now: t0, LeaseUntil: t0.Add(time.Minute), Limit: 5, Token: fmt.Sprintf("c%d", i)})
			if err != nil {
				t.Error(err)
			}
			mu.Lock()
			total += len(jobs)
			mu.Unlock()
		}()
	}
	wg.Wait()
	if total > 3 {
		t.Fatalf("concurrent claims took %d, more than the bucket's 3", total)
	}
	// What the concurrent claims skipped (a row another held) is taken later, within
	// the bucket.
	more := claim(t, s, t0, 100, "late")
	if total+len(more) != 3 {
		t.Fatalf("took %d then %d, want 3 in all", total, len(more))
	}
}

// testEventCatalog: event types are kept per account by name, archived ones listed
// only when asked, pages after a name; a name taken is ErrConflict; UpdateEventType
// stores what its change returns, and writes nothing when it fails; a missing type
// is ErrNotFound; the catalog's settings default to not strict and are replaced by
// SetCatalog.
func testEventCatalog(t *testing.T, b Bundle) {
	s := b.Store
	mk := func(account, name string, schema string) outboxdriver.EventType {
		et := outboxdriver.EventType{Account: account, Name: name, Description: "about " + name, CreatedAt: t0, UpdatedAt: t0}
		if schema != "" {
			et.Schema = json.RawMessage(schema)
		}
		if err := s.CreateEventType(ctx, et); err != nil {
			t.Fatal(err)
		}
		return et
	}
	inv := mk("acct", "invoice.paid", `{"type":"object"}`)
	mk("acct", "a.first", "")
	mk("acct", "z.last", "")
	mk("other", "invoice.paid", "")
	if err := s.CreateEventType(ctx, inv); !errors.Is(err, outboxdriver.ErrConflict) {
		t.Fatalf("a name taken: %v", err)
	}
	got, err := s.GetEventType(ctx, outboxdriver.GetEventTypeParams{Account: "acct", Name: "invoice.paid"})
	if err != nil || !reflect.DeepEqual(got, inv) {
		t.Fatalf("get: %+v %v, want %+v", got, err, inv)
	}
	if _, err := s.GetEventType(ctx, outboxdriver.GetEventTypeParams{Account: "acct", Name: "nope"}); !errors.Is(err, outboxdriver.ErrNotFound) {
		t.Fatalf("missing: %v", err)
	}
	archived := t0.Add(time.Hour)
	boom := errors.New("boom")
	if _, err := s.UpdateEventType(ctx, outboxdriver.UpdateEventTypeParams{Account: "acct", Name: "z.last",
		Change: func(et outboxdriver.EventType) (outboxdriver.EventType, error) { return et, boom }}); !errors.Is(err, boom) {
		t.Fatalf("a failed change: %v", err)
	}
	up, err := s.UpdateEventType(ctx, outboxdriver.UpdateEventTypeParams{Account: "acct", Name: "z.last",
		Change: func(et outboxdriver.EventType) (outboxdriver.EventType, error) {
			et.ArchivedAt, et.UpdatedAt, et.Schema, et.Description = &archived, archived, json.RawMessage(`{"type":"string"}`), "old"
			return et, nil
		}})
	if err != nil || up.ArchivedAt == nil || !up.ArchivedAt.Equal(archived) || string(up.Schema) != `{"type":"string"}` || up.Description != "old" {
		t.Fatalf("update: %+v %v", up, err)
	}
	if _, err := s.UpdateEventType(ctx, outboxdriver.UpdateEventTypeParams{Account: "other", Name: "a.first",
		Change: func(et outboxdriver.EventType) (outboxdriver.EventType, error) { return et, nil }}); !errors.Is(err, outboxdriver.ErrNotFound) {
		t.Fatalf("another account's type: %v", err)
	}
	names := func(p outboxdriver.ListEventTypesParams) []string {
		t.Helper()
		ts, err := s.ListEventTypes(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		out := []string{}
		for _, et := range ts {
			out = append(out, et.Name)
		}
		return out
	}
	if got := names(outboxdriver.ListEventTypesParams{Account: "acct", Limit: 10}); !reflect.DeepEqual(got, []string{"a.first", "invoice.paid"}) {
		t.Fatalf("list: %v", got)
	}
	if got := names(outboxdriver.ListEventTypesParams{Account: "acct", Limit: 10, IncludeArchived: true}); !reflect.DeepEqual(got, []string{"a.first", "invoice.paid", "z.last"}) {
		t.Fatalf("list with archived: %v", got)
	}
	if got := names(outboxdriver.ListEventTypesParams{Account: "acct", Limit: 1, AfterName: "a.first", IncludeArchived: true}); !reflect.DeepEqual(got, []string{"invoice.paid"}) {
		t.Fatalf("a page after a.first: %v", got)
	}
	c, err := s.GetCatalog(ctx, "acct")
	if err != nil || c != (outboxdriver.Catalog{Account: "acct"}) {
		t.Fatalf("default catalog: %+v %v", c, err)
	}
	for _, strict := range []bool{true, false, true} {
		if err := s.SetCatalog(ctx, outboxdriver.Catalog{Account: "acct", Strict: strict}); err != nil {
			t.Fatal(err)
		}
		if c, err := s.GetCatalog(ctx, "acct"); err != nil || c.Strict != strict {
			t.Fatalf("catalog %+v %v, want strict %v", c, err, strict)
		}
	}
	if c, err := s.GetCatalog(ctx, "other"); err != nil || c.Strict {
		t.Fatalf("another account's catalog: %+v %v", c, err)
	}
}
