package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/internal/pgtest"
	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
)

// groupStore opens a store on a fresh schema with endpoints ep_1 and ep_2 of
// account a (room for 3 leases each) and ep_3 of account b.
func groupStore(t *testing.T, callerTime bool) (*Store, time.Time) {
	t.Helper()
	u, _ := pgtest.Schema(t)
	s, err := OpenURL(context.Background(), u, Options{CallerTime: callerTime})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	now := s.Clock().Now().UTC().Truncate(time.Microsecond)
	for _, ep := range []struct {
		id, account string
		cap         int
	}{{"ep_1", "a", 3}, {"ep_2", "a", 3}, {"ep_3", "b", 5}} {
		e := outboxdriver.Endpoint{ID: ep.id, Account: ep.account, URL: "https://example.com", Events: []string{"*"},
			Profile: "standard", Status: outboxdriver.EndpointActive, CreatedAt: now, InFlightCap: ep.cap}
		if err := s.CreateEndpoint(context.Background(), outboxdriver.CreateEndpointParams{Endpoint: e,
			Audit: outboxdriver.AuditEntry{Account: ep.account, EndpointID: ep.id, Action: outboxdriver.AuditCreated, At: now}}); err != nil {
			t.Fatal(err)
		}
	}
	return s, now
}

// groupPublish is a publish as Publish queues it, asking a lease for every pending
// delivery; attemptOn fails that endpoint's delivery with attempt 0.
func groupPublish(id, account, data, attemptOn string, now time.Time) *groupedPublish {
	ev := outboxdriver.Event{ID: id, Account: account, Type: "call.status", CreatedAt: now, Data: json.RawMessage(data)}
	plan := func(ep outboxdriver.Endpoint) (outboxdriver.Delivery, *outboxdriver.Attempt, bool) {
		lease := now.Add(time.Minute)
		d := outboxdriver.Delivery{ID: "dlv_" + id + "_" + ep.ID, Account: account, EventID: id, EventType: ev.Type,
			EndpointID: ep.ID, Status: outboxdriver.DeliveryPending, NextAttemptAt: now, CreatedAt: now, UpdatedAt: now, LeaseUntil: &lease}
		if ep.ID != attemptOn {
			return d, nil, true
		}
		d.Status, d.LastError = outboxdriver.DeliveryFailed, "endpoint paused"
		return d, &outboxdriver.Attempt{DeliveryID: d.ID, At: now, ScheduledAt: now, Class: outboxdriver.ClassEndpointPaused}, true
	}
	return &groupedPublish{ctx: context.Background(), p: outboxdriver.PublishParams{Event: ev, Now: now, Plan: plan},
		done: make(chan struct{}), lead: make(chan struct{}, 1)}
}

func leasedIDs(p outboxdriver.Published) (leased, unleased []string) {
	for _, d := range p.Deliveries {
		if d.LeaseUntil != nil {
			leased = append(leased, d.ID)
		} else {
			unleased = append(unleased, d.ID)
		}
	}
	return leased, unleased
}

// TestPublishGroup: a group's publishes of new events are written by the group's
// statements, in one transaction: their deliveries, attempt 0, and the leases they
// ask for, each endpoint's granted up to its room in the group's order (the first
// publishes leased, the rest left to claims) on the database's clock or the caller's.
// A publish whose event id exists runs on its own after the group and so sees it: a
// repeat within the group and an earlier event are duplicates, other content is a
// conflict.
func TestPublishGroup(t *testing.T) {
	for _, callerTime := range []bool{false, true} {
		t.Run(fmt.Sprintf("CallerTime=%v", callerTime), func(t *testing.T) {
			s, now := groupStore(t, callerTime)
			ctx := context.Background()
			old := groupPublish("old", "a", `{"n":0}`, "", now)
			s.runGroup([]*groupedPublish{old})
			if old.err != nil {
				t.Fatal(old.err)
			}
			batch := []*groupedPublish{
				groupPublish("e1", "a", `{"n":1}`, "", now),
				groupPublish("e2", "b", `{"n":2}`, "ep_3", now),
				groupPublish("e1", "a", `{"n":1}`, "", now),  // repeat in the group
				groupPublish("old", "a", `{"n":0}`, "", now), // published before
				groupPublish("old", "a", `{"n":9}`, "", now), // other content
				groupPublish("e3", "a", `{"n":3}`, "", now),
			}
			// Which the group's statements write.
			var wrote []bool
			err := s.write(ctx, func(q querier) error {
				var err error
				wrote, err = s.publishTogether(ctx, q, batch)
				return errors.Join(err, errors.New("rolled back"))
			})
			if want := []bool{true, true, false, false, false, true}; !reflect.DeepEqual(wrote, want) {
				t.Fatalf("written together: %v, want %v (%v)", wrote, want, err)
			}

			s.runGroup(batch)
			for i, r := range batch {
				select {
				case <-r.done:
				default:
					t.Fatalf("publish %d got no answer", i)
				}
			}
			// ep_1 and ep_2 had room for 3 leases: old took one each, e1 and e3 the
			// rest.
			e1, e2, e3 := batch[0], batch[1], batch[5]
			if leased, unleased := leasedIDs(e1.out); e1.err != nil || e1.out.Duplicate || len(leased) != 2 || len(unleased) != 0 {
				t.Fatalf("e1: %+v, %v", e1.out, e1.err)
			}
			if leased, _ := leasedIDs(e3.out); e3.err != nil || len(leased) != 2 {
				t.Fatalf("e3: %+v, %v", e3.out, e3.err)
			}
			for _, d := range append(e1.out.Deliveries, e3.out.Deliveries...) {
				if d.LeaseUntil == nil || !d.LeaseUntil.Equal(now.Add(time.Minute)) && callerTime {
					t.Fatalf("lease of %s: %v, want %v", d.ID, d.LeaseUntil, now.Add(time.Minute))
				}
			}
			if e2.err != nil || len(e2.out.Deliveries) != 1 || e2.out.Deliveries[0].LeaseUntil != nil {
				t.Fatalf("e2 (failed, attempt 0): %+v, %v", e2.out, e2.err)
			}
			if r := batch[2]; r.err != nil || !r.out.Duplicate || len(r.out.Deliveries) != 2 {
				t.Fatalf("repeat of e1: %+v, %v", r.out, r.err)
			}
			if r := batch[3]; r.err != nil || !r.out.Duplicate {
				t.Fatalf("old: %+v, %v", r.out, r.err)
			}
			if r := batch[4]; !errors.Is(r.err, outboxdriver.ErrConflict) {
				t.Fatalf("old with other content: %v", r.err)
			}
			_, as, err := s.GetDelivery(ctx, outboxdriver.GetDeliveryParams{Account: "b", ID: "dlv_e2_ep_3"})
			if err != nil || len(as) != 1 || as[0].Number != 0 || as[0].Class != outboxdriver.ClassEndpointPaused {
				t.Fatalf("attempt 0 of e2: %+v, %v", as, err)
			}
			// The counts the claims trust match the leases.
			var bad int
			if err := s.pool.QueryRow(ctx, s.q(`SELECT count(*) FROM outbox_endpoints e WHERE in_flight <>
				(SELECT count(*) FROM outbox_deliveries d WHERE d.endpoint_id = e.id AND d.lease_until IS NOT NULL)`)).Scan(&bad); err != nil || bad != 0 {
				t.Fatalf("%d endpoints count their leases wrong (%v)", bad, err)
			}
			jobs, err := s.Claim(ctx, outboxdriver.ClaimParams{Now: now, LeaseUntil: now.Add(time.Minute), Limit: 10, Token: "tok"})
			if err != nil || len(jobs) != 0 {
				t.Fatalf("claim with every endpoint at its cap: %+v, %v", jobs, err)
			}
		})
	}
}

// TestPublishConcurrently: publishes from many goroutines at once, grouped, are each
// stored once with their deliveries, leased within the endpoints' caps and counted,
// and a
// publish whose context ends while it waits returns its context's error.
func TestPublishConcurrently(t *testing.T) {
	s, now := groupStore(t, false)
	ctx := context.Background()
	// Publishers that publish again as soon as they can, as a busy program does: the
	// groups' slots are handed on again and again.
	const publishers, each = 32, 20
	const n = publishers * each
	var wg sync.WaitGroup
	errs := make([]error, n)
	outs := make([]outboxdriver.Published, n)
	for p := range publishers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range each {
				i := p*each + k
				r := groupPublish(fmt.Sprintf("evt_%03d", i), "a", `{}`, "", now)
				outs[i], errs[i] = s.Publish(ctx, r.p)
			}
		}()
	}
	wg.Wait()
	leased := 0
	for i := range n {
		if errs[i] != nil || outs[i].Duplicate || len(outs[i].Deliveries) != 2 {
			t.Fatalf("publish %d: %+v, %v", i, outs[i], errs[i])
		}
		l, _ := leasedIDs(outs[i])
		leased += len(l)
	}
	// Two endpoints with room for 3: at most 6 leased (fewer when a group found an
	// endpoint's row held by another group's grant, which it skips, not waits for).
	if leased < 1 || leased > 6 {
		t.Fatalf("%d deliveries leased at publish, want 1 to 6", leased)
	}
	var bad int
	if err := s.pool.QueryRow(ctx, s.q(`SELECT count(*) FROM outbox_endpoints e WHERE in_flight <>
		(SELECT count(*) FROM outbox_deliveries d WHERE d.endpoint_id = e.id AND d.lease_until IS NOT NULL)`)).Scan(&bad); err != nil || bad != 0 {
		t.Fatalf("%d endpoints count their leases wrong (%v)", bad, err)
	}
	var stored int
	if err := s.pool.QueryRow(ctx, s.q(`SELECT count(*) FROM outbox_deliveries`)).Scan(&stored); err != nil || stored != 2*n {
		t.Fatalf("%d deliveries stored, want %d (%v)", stored, 2*n, err)
	}
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.Publish(canceled, groupPublish("evt_canceled", "a", `{}`, "", now).p); !errors.Is(err, context.Canceled) {
		t.Fatalf("publish with its context ended: %v", err)
	}
}

// TestGroupSlotsHandedOn: a group's slot goes to the first queued publisher that has
// none coming, never twice to one (two groups ending at once gave one publisher two
// slots, and the second hand-off blocked for good); with none left to take it, it is
// freed; a publisher that withdraws with a slot coming hands it on.
func TestGroupSlotsHandedOn(t *testing.T) {
	queued := func() *groupedPublish {
		return &groupedPublish{done: make(chan struct{}), lead: make(chan struct{}, 1)}
	}
	r1, r2, r3 := queued(), queued(), queued()
	g := &publishGroups{queue: []*groupedPublish{r1, r2}, leaders: 3}
	g.handOn() // two groups end at once
	g.handOn()
	if len(r1.lead) != 1 || len(r2.lead) != 1 || g.leaders != 3 {
		t.Fatalf("after two hand-offs: r1 %d, r2 %d slots coming, %d leaders", len(r1.lead), len(r2.lead), g.leaders)
	}
	g.handOn() // a third: nobody queued without a slot coming
	if g.leaders != 2 {
		t.Fatalf("%d leaders, want 2: the third slot is freed", g.leaders)
	}
	g.queue = append(g.queue, r3)
	if !g.withdraw(r1) || len(r1.lead) != 0 || len(r3.lead) != 1 || g.leaders != 2 {
		t.Fatalf("r1 withdrew: its slot went to r3 (%d coming), %d leaders", len(r3.lead), g.leaders)
	}
	g.took(r2)
	if r2.signalled || g.withdraw(r1) {
		t.Fatal("r2 took its slot; r1 is no longer queued")
	}
}
