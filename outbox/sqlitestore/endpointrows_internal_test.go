package sqlitestore

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
)

// TestClaimReadsEndpointsByVersion: a claim reads the whole row only of an endpoint
// whose version it has not read before; every change gives a new version, one made
// in a transaction that rolled back included, so a row a claim read inside that
// transaction is never taken for the endpoint (a version counted up would be given
// again to the next change).
func TestClaimReadsEndpointsByVersion(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, "versions.db", Options{})
	now := time.Now()
	if err := s.CreateEndpoint(ctx, outboxdriver.CreateEndpointParams{Endpoint: outboxdriver.Endpoint{ID: "ep_v", Account: "acct",
		URL: "https://example.com/", Secrets: []outboxdriver.Secret{{Key: "whsec_first"}}, Status: outboxdriver.EndpointActive,
		InFlightCap: 10, CreatedAt: now}}); err != nil {
		t.Fatal(err)
	}
	n := 0
	publish := func(tx querier) error {
		n++
		id := "evt_" + string(rune('a'+n))
		_, err := publish(ctx, tx, outboxdriver.PublishParams{Event: outboxdriver.Event{ID: id, Account: "acct", Type: "t", CreatedAt: now, Data: []byte(`{}`)},
			Now: now, Plan: func(ep outboxdriver.Endpoint) (outboxdriver.Delivery, *outboxdriver.Attempt, bool) {
				return outboxdriver.Delivery{ID: "dlv_" + id, Account: "acct", EventID: id, EventType: "t", EndpointID: ep.ID,
					Status: outboxdriver.DeliveryPending, NextAttemptAt: now, CreatedAt: now, UpdatedAt: now}, nil, true
			}})
		return err
	}
	claimSecret := func(tx querier) (string, error) {
		if err := publish(tx); err != nil {
			return "", err
		}
		jobs, err := s.claimIn(ctx, tx, outboxdriver.ClaimParams{Now: now, LeaseUntil: now.Add(time.Hour), Limit: 1, Token: "tok"})
		if err != nil || len(jobs) != 1 {
			return "", errors.Join(err, errors.New("no job"))
		}
		return jobs[0].Endpoint.Secrets[0].Key, nil
	}
	var version int64
	readVersion := func() int64 {
		var v int64
		if err := s.db.QueryRow(`SELECT version FROM outbox_endpoints WHERE id = 'ep_v'`).Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	version = readVersion()
	if err := s.write(ctx, func(tx querier) error {
		key, err := claimSecret(tx)
		if err == nil && key != "whsec_first" {
			t.Errorf("first claim: %s", key)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if v, ok := s.endpointRows.get("ep_v", version); !ok || v.Secrets[0].Key != "whsec_first" {
		t.Fatalf("the claim did not keep the row it read: %+v %v", v, ok)
	}
	// A change read by a claim in a transaction that rolls back.
	rolledBack := errors.New("rolled back")
	err := s.write(ctx, func(tx querier) error {
		if _, err := tx.ExecContext(ctx, `UPDATE outbox_endpoints SET secrets = '[{"key":"whsec_rolled_back"}]' WHERE id = 'ep_v'`); err != nil {
			return err
		}
		key, err := claimSecret(tx)
		if err == nil && key != "whsec_rolled_back" {
			t.Errorf("claim inside the change: %s", key)
		}
		return errors.Join(err, rolledBack)
	})
	if !errors.Is(err, rolledBack) || readVersion() != version {
		t.Fatalf("%v; version %d, want %d again", err, readVersion(), version)
	}
	// Another change, committed: its version is not the rolled-back one's.
	if _, err := s.db.ExecContext(ctx, `UPDATE outbox_endpoints SET secrets = '[{"key":"whsec_second"}]' WHERE id = 'ep_v'`); err != nil {
		t.Fatal(err)
	}
	if err := s.write(ctx, func(tx querier) error {
		if _, err := tx.ExecContext(ctx, `UPDATE outbox_deliveries SET status = 'SUCCEEDED', lease_until = NULL, lease_token = NULL`); err != nil {
			return err
		}
		key, err := claimSecret(tx)
		if err == nil && key != "whsec_second" {
			t.Errorf("claim after the committed change: %s, want whsec_second", key)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
}
