package sqlitestore

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
)

// TestClaimPickMatchesFullWindow: the claim's first, short read of the window picks
// exactly what the full window (4×limit rows) picks, whatever the limit, with ties of
// due times across the cut, an endpoint at its room and endpoints partly leased; and
// both the short read and the full window serve some of the claims.
func TestClaimPickMatchesFullWindow(t *testing.T) {
	ctx := context.Background()
	st := openTest(t, "pick.db", Options{})
	base := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	for _, ep := range []struct {
		id  string
		cap int
	}{{"ep_a", 3}, {"ep_b", 40}, {"ep_c", 1000}} {
		e := outboxdriver.Endpoint{ID: ep.id, Account: "acct", URL: "https://example.com", Events: []string{"*"},
			Profile: "standard", Status: outboxdriver.EndpointActive, CreatedAt: base, InFlightCap: ep.cap}
		if err := st.CreateEndpoint(ctx, outboxdriver.CreateEndpointParams{Endpoint: e,
			Audit: outboxdriver.AuditEntry{Account: "acct", EndpointID: ep.id, Action: outboxdriver.AuditCreated, At: base}}); err != nil {
			t.Fatal(err)
		}
	}
	// 60 events, each delivered to the three endpoints; due times in steps of 1 µs,
	// three events a step (ties within and across endpoints), ep_c's a step later.
	for i := range 60 {
		ev := outboxdriver.Event{ID: fmt.Sprintf("evt_%02d", i), Account: "acct", Type: "call.status", CreatedAt: base,
			Data: json.RawMessage(`{}`)}
		plan := func(ep outboxdriver.Endpoint) (outboxdriver.Delivery, *outboxdriver.Attempt, bool) {
			next := base.Add(time.Duration(i/3) * time.Microsecond)
			if ep.ID == "ep_c" {
				next = next.Add(time.Microsecond)
			}
			return outboxdriver.Delivery{ID: fmt.Sprintf("dlv_%02d_%s", i, ep.ID), Account: "acct", EventID: ev.ID,
				EventType: ev.Type, EndpointID: ep.ID, Status: outboxdriver.DeliveryPending, NextAttemptAt: next,
				CreatedAt: base, UpdatedAt: base}, nil, true
		}
		if err := st.write(ctx, func(q querier) error {
			_, err := publish(ctx, q, outboxdriver.PublishParams{Event: ev, Now: base, Plan: plan})
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	short, full := 0, 0
	check := func(stage string) {
		t.Helper()
		for _, at := range []time.Duration{0, 5 * time.Microsecond, 12 * time.Microsecond, time.Second} {
			now := micros(base.Add(at))
			for limit := 1; limit <= 50; limit++ {
				err := st.write(ctx, func(q querier) error {
					got, _, err := claimPick(ctx, q, now, limit)
					if err != nil {
						return err
					}
					window, err := claimWindow(ctx, q, now, 4*limit)
					if err != nil {
						return err
					}
					head := append([]dueRow(nil), window[:min(len(window), limit+1)]...)
					if len(head) <= limit || head[limit].next > head[limit-1].next && len(pickDue(head[:limit], limit)) == limit {
						short++
					} else {
						full++
					}
					if want := pickDue(window, limit); !reflect.DeepEqual(got, want) {
						t.Errorf("%s, now +%v, limit %d: picked %v, the full window picks %v", stage, at, limit, got, want)
					}
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	check("nothing leased")
	// Lease some of each endpoint: ep_a reaches its room sooner.
	if _, err := st.Claim(ctx, outboxdriver.ClaimParams{Now: base.Add(time.Second), LeaseUntil: base.Add(time.Hour),
		Limit: 20, Token: "lease_1"}); err != nil {
		t.Fatal(err)
	}
	check("some leased")
	if short == 0 || full == 0 {
		t.Fatalf("the short read served %d claims and the full window %d: both must be exercised", short, full)
	}
}
