package outboxtest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
)

func testClaim(t *testing.T, b Bundle) {
	s := b.Store
	paused, disabled, held, removed := endpoint("ep_p", "acct"), endpoint("ep_d", "acct"), endpoint("ep_h", "acct"), endpoint("ep_r", "acct")
	paused.Status, disabled.Status = outboxdriver.EndpointPaused, outboxdriver.EndpointDisabled
	holdUntil := t0.Add(time.Minute)
	held.HoldUntil = &holdUntil
	mustCreate(t, s, endpoint("ep_a", "acct"), paused, disabled, held, removed)
	if _, err := s.UpdateEndpoint(ctx, outboxdriver.UpdateEndpointParams{Account: "acct", ID: "ep_r", Change: func(ep outboxdriver.Endpoint) (outboxdriver.Change, error) {
		ep.RemovedAt = &t0
		return outboxdriver.Change{Endpoint: &ep}, nil
	}}); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.NextDue(ctx); ok || err != nil {
		t.Fatalf("NextDue on an empty store: %v %v", ok, err)
	}
	now := publish(t, s, "acct", "evt_now", t0)
	later := publish(t, s, "acct", "evt_later", t0.Add(time.Hour))
	if len(now) != 4 || len(later) != 4 {
		t.Fatalf("published %d and %d deliveries", len(now), len(later))
	}
	if due, ok, err := s.NextDue(ctx); !ok || err != nil || !due.Equal(t0) {
		t.Fatalf("NextDue %v %v %v", due, ok, err)
	}

	jobs := claim(t, s, t0, 100, "tok1")
	if len(jobs) != 1 || jobs[0].Endpoint.ID != "ep_a" || jobs[0].Event.ID != "evt_now" || jobs[0].Token != "tok1" {
		t.Fatalf("claimed %+v, want only ep_a's due delivery", jobs)
	}
	j := jobs[0]
	if j.Delivery.LeaseUntil == nil || !j.Delivery.LeaseUntil.Equal(t0.Add(time.Minute)) ||
		string(j.Event.Data) != `{"n":1}` || j.Endpoint.Secrets[0].Key == "" || j.Endpoint.APIVersion != "v1" {
		t.Fatalf("job %+v", j)
	}
	if again := claim(t, s, t0, 100, "tok2"); len(again) != 0 {
		t.Fatalf("claimed a leased delivery again: %+v", again)
	}
	// The hold ends: ep_h's delivery becomes claimable; paused, disabled and removed
	// endpoints never are.
	jobs = claim(t, s, holdUntil, 100, "tok3")
	if len(jobs) != 1 || jobs[0].Endpoint.ID != "ep_h" {
		t.Fatalf("after the hold: %+v", jobs)
	}
	jobs = claim(t, s, t0.Add(2*time.Hour), 100, "tok4")
	for _, j := range jobs {
		if j.Endpoint.ID != "ep_a" && j.Endpoint.ID != "ep_h" {
			t.Fatalf("claimed for %s (%s)", j.Endpoint.ID, j.Endpoint.Status)
		}
	}
	if len(jobs) != 2 {
		t.Fatalf("claimed %d later deliveries, want 2", len(jobs))
	}
	if _, err := s.Claim(ctx, outboxdriver.ClaimParams{Now: t0, LeaseUntil: t0, Limit: 0, Token: "x"}); err != nil {
		t.Fatalf("limit 0: %v", err)
	}
}

func testClaimInFlightCap(t *testing.T, b Bundle) {
	s := b.Store
	capped, free := endpoint("ep_c", "acct"), endpoint("ep_f", "acct")
	capped.InFlightCap, free.InFlightCap = 2, 100
	capped.Events, free.Events = []string{"c"}, []string{"f"}
	mustCreate(t, s, capped, free)
	for i := range 5 {
		publish(t, s, "acct", fmt.Sprintf("evt_%d", i), t0.Add(time.Duration(i)*time.Second))
	}
	// Every event fans out to both (the plan ignores filters); the capped endpoint's
	// earliest are first in due order and must not crowd out the other's.
	jobs := claim(t, s, t0.Add(time.Minute), 100, "tok1")
	per := map[string]int{}
	for _, j := range jobs {
		per[j.Endpoint.ID]++
	}
	if per["ep_c"] != 2 || per["ep_f"] != 5 {
		t.Fatalf("claimed per endpoint %v, want ep_c 2 (its cap) and ep_f 5", per)
	}
	if jobs := claim(t, s, t0.Add(time.Minute), 100, "tok2"); len(jobs) != 0 {
		t.Fatalf("claimed past the cap: %d", len(jobs))
	}
	// Finishing one frees one slot.
	for _, j := range jobs {
		if j.Endpoint.ID == "ep_c" {
			done := j.Delivery
			done.Status = outboxdriver.DeliverySucceeded
			done.UpdatedAt = t0
			if _, err := s.Complete(ctx, []outboxdriver.Completion{{DeliveryID: j.Delivery.ID, Token: "tok1",
				Decide: func(outboxdriver.Delivery, outboxdriver.Endpoint) (outboxdriver.Change, error) {
					return outboxdriver.Change{At: t0, Delivery: &done}, nil
				}}}); err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	if jobs := claim(t, s, t0.Add(time.Minute), 100, "tok3"); len(jobs) != 1 || jobs[0].Endpoint.ID != "ep_c" {
		t.Fatalf("after one completion: %+v", jobs)
	}
	// The batch limit holds too.
	publish(t, s, "acct", "evt_more", t0)
	if jobs := claim(t, s, t0.Add(time.Minute), 1, "tok4"); len(jobs) != 1 {
		t.Fatalf("limit 1 claimed %d", len(jobs))
	}
}

// testClaimConcurrent: claims racing from several goroutines never lease a delivery
// twice.
func testClaimConcurrent(t *testing.T, b Bundle) {
	s := b.Store
	ep := endpoint("ep_a", "acct")
	ep.InFlightCap = 1000
	mustCreate(t, s, ep)
	for i := range 200 {
		publish(t, s, "acct", fmt.Sprintf("evt_%d", i), t0)
	}
	var (
		mu   sync.Mutex
		seen = map[string]string{}
		wg   sync.WaitGroup
		errs []error
	)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			token := fmt.Sprintf("tok%d", w)
			for {
				jobs, err := s.Claim(ctx, outboxdriver.ClaimParams{Now: t0, LeaseUntil: t0.Add(time.Minute), Limit: 7, Token: token})
				if err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
					return
				}
				if len(jobs) == 0 {
					return
				}
				mu.Lock()
				for _, j := range jobs {
					if prev, dup := seen[j.Delivery.ID]; dup {
						errs = append(errs, fmt.Errorf("delivery %s claimed by %s and %s", j.Delivery.ID, prev, token))
					}
					seen[j.Delivery.ID] = token
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 200 {
		t.Fatalf("claimed %d of 200", len(seen))
	}
}

// testClaimReserve: a claim with Reserve claims no more than Reserve returns (and no
// more than Limit), asked with Limit; a Reserve of 0 leases nothing, in Claim and in
// CompleteClaim, whose outcomes are still recorded.
func testClaimReserve(t *testing.T, s outboxdriver.Store) {
	now := t0.Add(time.Minute)
	for i := range 6 {
		publish(t, s, "acct", fmt.Sprintf("evt_%d", i), t0.Add(time.Duration(i)*time.Second))
	}
	reserving := func(limit, room int, token string, asked *[]int) outboxdriver.ClaimParams {
		return outboxdriver.ClaimParams{Now: now, LeaseUntil: now.Add(time.Minute), Limit: limit, Token: token,
			Reserve: func(limit int) int { *asked = append(*asked, limit); return room }}
	}
	var asked []int
	if jobs, err := s.Claim(ctx, reserving(5, 0, "tok0", &asked)); err != nil || len(jobs) != 0 || len(asked) == 0 || asked[0] != 5 {
		t.Fatalf("reserve 0: %d jobs, %v, asked %v; want none, asked with the limit 5", len(jobs), err, asked)
	}
	asked = nil
	first, err := s.Claim(ctx, reserving(5, 2, "tok1", &asked))
	if err != nil || len(first) != 2 || first[0].Event.ID != "evt_0" || first[1].Event.ID != "evt_1" {
		t.Fatalf("reserve 2 of 5: %+v, %v; want the 2 earliest", first, err)
	}
	asked = nil
	if jobs, err := s.Claim(ctx, reserving(1, 3, "tok2", &asked)); err != nil || len(jobs) != 1 {
		t.Fatalf("reserve 3, limit 1: %d jobs, %v; want 1", len(jobs), err)
	}
	succeed := outboxdriver.Completion{DeliveryID: first[0].Delivery.ID, Token: "tok1",
		Decide: func(d outboxdriver.Delivery, _ outboxdriver.Endpoint) (outboxdriver.Change, error) {
			nd := d
			nd.Status, nd.UpdatedAt = outboxdriver.DeliverySucceeded, now
			return outboxdriver.Change{At: now, Delivery: &nd}, nil
		}}
	asked = nil
	applied, jobs, err := s.CompleteClaim(ctx, outboxdriver.CompleteClaimParams{Outcomes: []outboxdriver.Completion{succeed},
		Next: reserving(10, 0, "tok3", &asked)})
	if err != nil || len(applied) != 1 || !applied[0] || len(jobs) != 0 || len(asked) == 0 || asked[0] != 10 {
		t.Fatalf("complete, reserve 0: applied %v, %d jobs, %v, asked %v", applied, len(jobs), err, asked)
	}
	if d, _ := getDelivery(t, s, "acct", first[0].Delivery.ID); d.Status != outboxdriver.DeliverySucceeded {
		t.Fatalf("the outcome beside a claim of none was not recorded: %+v", d)
	}
	succeed.DeliveryID = first[1].Delivery.ID
	applied, jobs, err = s.CompleteClaim(ctx, outboxdriver.CompleteClaimParams{Outcomes: []outboxdriver.Completion{succeed},
		Next: reserving(10, 2, "tok4", &asked)})
	if err != nil || !applied[0] || len(jobs) != 2 || jobs[0].Event.ID != "evt_3" || jobs[0].Token != "tok4" {
		t.Fatalf("complete, reserve 2: applied %v, jobs %+v, %v; want evt_3 and evt_4", applied, jobs, err)
	}
	// What no claim took is still there for the next one.
	if rest := claim(t, s, now, 10, "tok5"); len(rest) != 1 || rest[0].Event.ID != "evt_5" {
		t.Fatalf("left over: %+v, want evt_5", rest)
	}
}
