package sqlitestore_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
)

// TestClaimSeesEndpointChangedElsewhere: a claim decodes an endpoint's JSON columns
// only when they changed since it read them (outbox/internal/endpointcache), and a
// change made by another process on the file (here a connection of its own) is
// seen at the next claim: the cache is keyed by the columns' text.
func TestClaimSeesEndpointChangedElsewhere(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "outbox.db")
	st := open(t, path)
	if err := st.CreateEndpoint(ctx, outboxdriver.CreateEndpointParams{Endpoint: outboxdriver.Endpoint{ID: "ep_cache", Account: "acct",
		URL: "https://example.com/", Events: []string{"*"}, Secrets: []outboxdriver.Secret{{Key: "whsec_old"}},
		Status: outboxdriver.EndpointActive, InFlightCap: 10}}); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	claim := func(event string) outboxdriver.Job {
		t.Helper()
		ev := outboxdriver.Event{ID: event, Account: "acct", Type: "t", CreatedAt: now, Data: []byte(`{}`)}
		plan := func(ep outboxdriver.Endpoint) (outboxdriver.Delivery, *outboxdriver.Attempt, bool) {
			return outboxdriver.Delivery{ID: "dlv_" + event, Account: "acct", EventID: event, EventType: "t", EndpointID: ep.ID,
				Status: outboxdriver.DeliveryPending, NextAttemptAt: now, CreatedAt: now, UpdatedAt: now}, nil, true
		}
		if _, err := st.Publish(ctx, outboxdriver.PublishParams{Event: ev, Now: now, Plan: plan}); err != nil {
			t.Fatal(err)
		}
		jobs, err := st.Claim(ctx, outboxdriver.ClaimParams{Now: now, LeaseUntil: now.Add(time.Minute), Limit: 1, Token: "tok_" + event})
		if err != nil || len(jobs) != 1 {
			t.Fatalf("claim %s: %+v %v", event, jobs, err)
		}
		return jobs[0]
	}
	if job := claim("evt_1"); job.Endpoint.Secrets[0].Key != "whsec_old" {
		t.Fatalf("first claim's endpoint: %+v", job.Endpoint)
	}
	other, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.Exec(`UPDATE outbox_endpoints SET secrets = '[{"key":"whsec_new"}]', events = '["t"]' WHERE id = 'ep_cache'`); err != nil {
		t.Fatal(err)
	}
	if job := claim("evt_2"); job.Endpoint.Secrets[0].Key != "whsec_new" || len(job.Endpoint.Events) != 1 || job.Endpoint.Events[0] != "t" {
		t.Fatalf("claim after the change elsewhere: %+v", job.Endpoint)
	}
}
