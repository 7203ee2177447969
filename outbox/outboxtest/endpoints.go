package outboxtest

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
)

func testEndpoints(t *testing.T, b Bundle) {
	s := b.Store
	a, other := endpoint("ep_a", "acct"), endpoint("ep_b", "other")
	a.Managed = true
	a.Overrides = outboxdriver.Overrides{ScheduleSeconds: []float64{1, 2}, On429: ptr(outboxdriver.RetryAfterDelay)}
	exp := t0.Add(time.Hour)
	a.Secrets = append(a.Secrets, outboxdriver.Secret{Key: "whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", ExpiresAt: &exp})
	mustCreate(t, s, a, other)

	got, err := s.GetEndpoint(ctx, outboxdriver.GetEndpointParams{Account: "acct", ID: "ep_a"})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, a) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got, a)
	}
	if _, err := s.GetEndpoint(ctx, outboxdriver.GetEndpointParams{Account: "acct", ID: "ep_b"}); !errors.Is(err, outboxdriver.ErrNotFound) {
		t.Fatalf("another account's endpoint: %v", err)
	}
	if _, err := s.GetEndpoint(ctx, outboxdriver.GetEndpointParams{Account: "acct", ID: "nope"}); !errors.Is(err, outboxdriver.ErrNotFound) {
		t.Fatalf("missing endpoint: %v", err)
	}
	if err := s.CreateEndpoint(ctx, outboxdriver.CreateEndpointParams{Endpoint: a, Audit: outboxdriver.AuditEntry{}}); !errors.Is(err, outboxdriver.ErrConflict) {
		t.Fatalf("duplicate id: %v", err)
	}
	list, err := s.ListEndpoints(ctx, "acct")
	if err != nil || len(list) != 1 || list[0].ID != "ep_a" {
		t.Fatalf("list: %+v %v", list, err)
	}
	audit, err := s.ListAudit(ctx, outboxdriver.ListAuditParams{Account: "acct", Limit: 10})
	if err != nil || len(audit) != 1 || audit[0].Action != outboxdriver.AuditCreated || !audit[0].At.Equal(t0) {
		t.Fatalf("audit: %+v %v", audit, err)
	}
}

func testUpdateEndpoint(t *testing.T, s outboxdriver.Store) {
	boom := errors.New("refused")
	if _, err := s.UpdateEndpoint(ctx, outboxdriver.UpdateEndpointParams{Account: "acct", ID: "ep_a", Change: func(ep outboxdriver.Endpoint) (outboxdriver.Change, error) {
		ep.URL = "https://changed.example"
		return outboxdriver.Change{Endpoint: &ep}, boom
	}}); !errors.Is(err, boom) {
		t.Fatalf("change error: %v", err)
	}
	if ep, _ := s.GetEndpoint(ctx, outboxdriver.GetEndpointParams{Account: "acct", ID: "ep_a"}); ep.URL != "https://example.com/ep_a" {
		t.Fatalf("an aborted change wrote %s", ep.URL)
	}
	if _, err := s.UpdateEndpoint(ctx, outboxdriver.UpdateEndpointParams{Account: "other", ID: "ep_a", Change: func(ep outboxdriver.Endpoint) (outboxdriver.Change, error) {
		return outboxdriver.Change{}, nil
	}}); !errors.Is(err, outboxdriver.ErrNotFound) {
		t.Fatalf("update across accounts: %v", err)
	}
	held := t0.Add(time.Minute)
	got, err := s.UpdateEndpoint(ctx, outboxdriver.UpdateEndpointParams{Account: "acct", ID: "ep_a", Change: func(ep outboxdriver.Endpoint) (outboxdriver.Change, error) {
		ep.Status, ep.PausedAt, ep.PauseReason = outboxdriver.EndpointPaused, &t0, outboxdriver.ReasonGone
		ep.Failures, ep.FailingSince, ep.HoldUntil = 7, &t0, &held
		ep.InFlightCap = 3
		return outboxdriver.Change{At: t0, Endpoint: &ep, Audit: []outboxdriver.AuditEntry{{Account: "acct", EndpointID: ep.ID,
			Action: outboxdriver.AuditPaused, Reason: outboxdriver.ReasonGone, At: t0}}}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != outboxdriver.EndpointPaused || got.Failures != 7 || !got.HoldUntil.Equal(held) ||
		got.PauseReason != outboxdriver.ReasonGone || got.InFlightCap != 3 || !got.FailingSince.Equal(t0) {
		t.Fatalf("after update: %+v", got)
	}
	// Removal hides the endpoint and drops its waiting deliveries.
	ds := publish(t, s, "acct", "evt_1", t0)
	removed := t0.Add(time.Hour)
	if _, err := s.UpdateEndpoint(ctx, outboxdriver.UpdateEndpointParams{Account: "acct", ID: "ep_a", Change: func(ep outboxdriver.Endpoint) (outboxdriver.Change, error) {
		ep.RemovedAt = &removed
		return outboxdriver.Change{At: removed, Endpoint: &ep, Waiting: outboxdriver.DeliveryDropped, WaitingReason: "removed"}, nil
	}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetEndpoint(ctx, outboxdriver.GetEndpointParams{Account: "acct", ID: "ep_a"}); !errors.Is(err, outboxdriver.ErrNotFound) {
		t.Fatalf("removed endpoint still readable: %v", err)
	}
	if d, _ := getDelivery(t, s, "acct", ds[0].ID); d.Status != outboxdriver.DeliveryDropped || d.LastError != "removed" || !d.UpdatedAt.Equal(removed) {
		t.Fatalf("waiting delivery after removal: %+v", d)
	}
	if pub := publish(t, s, "acct", "evt_2", t0); len(pub) != 0 {
		t.Fatalf("removed endpoint got %d deliveries", len(pub))
	}
}
