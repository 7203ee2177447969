package outboxtest

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
)

// Bundle is what a store implementation gives the suite for one test: a fresh, empty
// store, and a way to begin a transaction on its database (for Publish with a
// caller's transaction).
type Bundle struct {
	Store outboxdriver.Store
	// BeginTx begins a transaction of a type the store's Publish writes in.
	BeginTx func(ctx context.Context) (Tx, error)
}

// Tx is a caller's transaction as the suite drives it: Tx is what goes in
// outboxdriver.PublishParams.Tx (a *sql.Tx, a pgx.Tx), with its way to commit and to
// roll back.
type Tx struct {
	Tx       any
	Commit   func() error
	Rollback func() error
}

// Factory returns a fresh Bundle; it registers its own cleanup on t.
type Factory func(t *testing.T) Bundle

// Run runs every conformance test against stores made by newStore. Each subtest gets
// its own store and runs in parallel.
func Run(t *testing.T, newStore Factory) {
	tests := []struct {
		name string
		fn   func(t *testing.T, b Bundle)
	}{
		{"Endpoints", testEndpoints},
		{"UpdateEndpoint", onEndpoint(testUpdateEndpoint)},
		{"Publish", testPublish},
		{"PublishTx", testPublishTx},
		{"PublishLease", testPublishLease},
		{"PublishLeaseConcurrent", testPublishLeaseConcurrent},
		{"Claim", testClaim},
		{"ClaimInFlightCap", testClaimInFlightCap},
		{"ClaimConcurrent", testClaimConcurrent},
		{"ClaimReserve", onEndpoint(testClaimReserve)},
		{"Complete", onEndpoint(testComplete)},
		{"CompleteInOrder", onEndpoint(testCompleteInOrder)},
		{"CompleteClaim", testCompleteClaim},
		{"Reap", onEndpoint(testReap)},
		{"UpdateDeliveryAndRecover", onEndpoint(testUpdateDeliveryAndRecover)},
		{"Listings", testListings},
		{"Purge", onEndpoint(testPurge)},
		{"NotFound", testNotFound},
		{"AccountIsolation", testAccountIsolation},
		{"NothingChangedOnError", testNothingChangedOnError},
		{"CanceledContext", onEndpoint(testCanceledContext)},
		{"EndpointChange", testEndpointChange},
		{"DeliveryChange", onEndpoint(testDeliveryChange)},
		{"WaitingScope", testWaitingScope},
		{"AuditLog", onEndpoint(testAuditLog)},
		{"ClaimDue", onEndpoint(testClaimDue)},
		{"CompleteTokens", onEndpoint(testCompleteTokens)},
		{"ReapScope", testReapScope},
		{"RecoverScope", testRecoverScope},
		{"ListEventsCursor", onEndpoint(testListEventsCursor)},
		{"ListDeliveriesCursor", testListDeliveriesCursor},
		{"ListDeliveriesWhileInserting", testListDeliveriesWhileInserting},
		{"PurgeScope", onEndpoint(testPurgeScope)},
		{"PublishPlan", testPublishPlan},
		{"PublishDuplicate", testPublishDuplicate},
		{"EventIDsPerAccount", testEventIDsPerAccount},
		{"AuditFields", testAuditFields},
		{"PublishLeaseRules", testPublishLeaseRules},
		{"ChangeAt", onEndpoint(testChangeAt)},
		{"CompleteUnleased", onEndpoint(testCompleteUnleased)},
		{"RecoverNotFound", testRecoverNotFound},
		{"QueueDepth", testQueueDepth},
		{"RoutingFields", testRoutingFields},
		{"IdempotencyKeys", testIdempotencyKeys},
		{"IdempotencyKeyConcurrent", testIdempotencyKeyConcurrent},
		{"ClaimRateLimit", testClaimRateLimit},
		{"ClaimRateLimitConcurrent", testClaimRateLimitConcurrent},
		{"EventCatalog", testEventCatalog},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, newStore(t))
		})
	}
}

// t0 is the suite's pinned time; stores keep microseconds.
var t0 = time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)

var ctx = context.Background()

func endpoint(id, account string) outboxdriver.Endpoint {
	return outboxdriver.Endpoint{
		ID: id, Account: account, URL: "https://example.com/" + id, Events: []string{"*"}, APIVersion: "v1",
		Secrets: []outboxdriver.Secret{{Key: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}}, Profile: "standard",
		Overrides: outboxdriver.Overrides{MaxAttempts: ptr(3)}, Status: outboxdriver.EndpointActive, CreatedAt: t0, InFlightCap: 10,
	}
}

func mustCreate(t *testing.T, s outboxdriver.Store, eps ...outboxdriver.Endpoint) {
	t.Helper()
	for _, ep := range eps {
		if err := s.CreateEndpoint(ctx, outboxdriver.CreateEndpointParams{Endpoint: ep, Audit: outboxdriver.AuditEntry{Account: ep.Account, EndpointID: ep.ID,
			Action: outboxdriver.AuditCreated, At: t0}}); err != nil {
			t.Fatal(err)
		}
	}
}

// onEndpoint adapts a case that starts from the fixture most cases share, the one
// endpoint ep_a of account acct, and needs nothing of its Bundle but the store.
func onEndpoint(fn func(t *testing.T, s outboxdriver.Store)) func(t *testing.T, b Bundle) {
	return func(t *testing.T, b Bundle) {
		mustCreate(t, b.Store, endpoint("ep_a", "acct"))
		fn(t, b.Store)
	}
}

var seq atomic.Int64

// planAll plans one PENDING delivery due at due for every endpoint.
func planAll(ev outboxdriver.Event, due time.Time) outboxdriver.PlanFunc {
	return func(ep outboxdriver.Endpoint) (outboxdriver.Delivery, *outboxdriver.Attempt, bool) {
		return outboxdriver.Delivery{ID: fmt.Sprintf("dlv_%s_%s_%d", ev.ID, ep.ID, seq.Add(1)), Account: ev.Account, EventID: ev.ID,
			EventType: ev.Type, EndpointID: ep.ID, Status: outboxdriver.DeliveryPending, NextAttemptAt: due,
			CreatedAt: due, UpdatedAt: due}, nil, true
	}
}

// publish stores an event of account and returns its deliveries.
func publish(t *testing.T, s outboxdriver.Store, account, id string, due time.Time) []outboxdriver.Delivery {
	t.Helper()
	ev := outboxdriver.Event{ID: id, Account: account, Type: "call.status", CreatedAt: due, Data: json.RawMessage(`{"n":1}`)}
	pub, err := s.Publish(ctx, outboxdriver.PublishParams{Event: ev, Now: due, Plan: planAll(ev, due)})
	if err != nil {
		t.Fatal(err)
	}
	return pub.Deliveries
}

func claim(t *testing.T, s outboxdriver.Store, now time.Time, limit int, token string) []outboxdriver.Job {
	t.Helper()
	jobs, err := s.Claim(ctx, outboxdriver.ClaimParams{Now: now, LeaseUntil: now.Add(time.Minute), Limit: limit, Token: token})
	if err != nil {
		t.Fatal(err)
	}
	return jobs
}

func getDelivery(t *testing.T, s outboxdriver.Store, account, id string) (outboxdriver.Delivery, []outboxdriver.Attempt) {
	t.Helper()
	d, as, err := s.GetDelivery(ctx, outboxdriver.GetDeliveryParams{Account: account, ID: id})
	if err != nil {
		t.Fatal(err)
	}
	return d, as
}

func ptr[T any](v T) *T { return &v }
