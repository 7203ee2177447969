package pgstore

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"reflect"
	"testing"
	"testing/fstest"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/switchboard-voice/switchboard/internal/migrate"
	"github.com/switchboard-voice/switchboard/internal/pgpool"
	"github.com/switchboard-voice/switchboard/internal/pgtest"
	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
)

// TestMigrationKeepsDeliveryLog: a schema of the release before migration 0003
// (migrations 0001–0002, filled as that release wrote it: deliveries in every state
// on two endpoints, one leased by a claim) keeps its delivery log through 0003: every
// listing (the account's, an endpoint's, each state's, an event's, from a cursor)
// lists the same deliveries in the same order, the leased delivery's outcome is
// recorded, the due one is claimed, and the purge takes what retention ends.
func TestMigrationKeepsDeliveryLog(t *testing.T) {
	ctx := context.Background()
	u, schema := pgtest.Schema(t)
	pool, err := pgxpool.New(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	old := fstest.MapFS{}
	names, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		if base := path.Base(name); base < "0003" {
			body, err := migrations.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			old[base] = &fstest.MapFile{Data: body}
		}
	}
	if len(old) != 2 {
		t.Fatalf("the previous release had 2 migrations, found %d", len(old))
	}
	if err := pgpool.Migrate(ctx, pool, schema, migrate.Line{Table: MigrationTable, FS: old}); err != nil {
		t.Fatal(err)
	}
	at := func(us int) string {
		return fmt.Sprintf("'1970-01-01T00:00:00Z'::timestamptz + interval '%d microseconds'", us)
	}
	stmts := []string{`INSERT INTO outbox_endpoints (id, account, url, events, api_version, secrets, profile, overrides, managed, status, created_at, in_flight_cap, in_flight)
		VALUES ('ep_a', 'acct', 'https://a.example/', '["*"]', '', '[]', 'standard', '{}', false, 'ACTIVE', ` + at(1) + `, 10, 1),
		       ('ep_b', 'acct', 'https://b.example/', '["*"]', '', '[]', 'standard', '{}', false, 'ACTIVE', ` + at(2) + `, 10, 0)`}
	for e := 1; e <= 4; e++ {
		stmts = append(stmts, fmt.Sprintf(`INSERT INTO outbox_events (id, account, type, created_at, stored_at, data)
			VALUES ('evt_%d', 'acct', 't', %s, %s, '{}')`, e, at(99+e), at(99+e)))
	}
	type oldDelivery struct {
		id, ep, event, status string
		created               int
		leased                bool
	}
	olds := []oldDelivery{
		{"dlv_1", "ep_a", "evt_1", "SUCCEEDED", 100, false}, {"dlv_2", "ep_b", "evt_1", "FAILED", 100, false},
		{"dlv_3", "ep_a", "evt_2", "PENDING", 101, true}, {"dlv_4", "ep_b", "evt_2", "PENDING", 101, false},
		{"dlv_5", "ep_a", "evt_3", "DEAD", 102, false}, {"dlv_6", "ep_b", "evt_4", "SUCCEEDED", 103, false},
	}
	for _, d := range olds {
		lease, token := "NULL", "NULL"
		if d.leased {
			lease, token = "now() + interval '1 hour'", "'tok_old'"
		}
		stmts = append(stmts, fmt.Sprintf(`INSERT INTO outbox_deliveries (id, account, event_id, event_type, endpoint_id, status,
			next_attempt_at, lease_until, lease_token, created_at, updated_at)
			VALUES ('%s', 'acct', '%s', 't', '%s', '%s', %s, %s, %s, %s, %s)`,
			d.id, d.event, d.ep, d.status, at(50), lease, token, at(d.created), at(d.created)))
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `SET search_path TO `+pgx.Identifier{schema}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	for _, q := range stmts {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	conn.Release()

	s, err := Open(ctx, pool, Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for name, c := range map[string]struct {
		q    outboxdriver.DeliveryQuery
		want []string
	}{
		"account":      {outboxdriver.DeliveryQuery{}, []string{"dlv_6", "dlv_5", "dlv_4", "dlv_3", "dlv_2", "dlv_1"}},
		"ep_a":         {outboxdriver.DeliveryQuery{EndpointID: "ep_a"}, []string{"dlv_5", "dlv_3", "dlv_1"}},
		"pending":      {outboxdriver.DeliveryQuery{Status: outboxdriver.DeliveryPending}, []string{"dlv_4", "dlv_3"}},
		"ep_a pending": {outboxdriver.DeliveryQuery{EndpointID: "ep_a", Status: outboxdriver.DeliveryPending}, []string{"dlv_3"}},
		"failed":       {outboxdriver.DeliveryQuery{Status: outboxdriver.DeliveryFailed}, []string{"dlv_2"}},
		"evt_1":        {outboxdriver.DeliveryQuery{EventID: "evt_1"}, []string{"dlv_2", "dlv_1"}},
		"cursor":       {outboxdriver.DeliveryQuery{BeforeID: "dlv_4"}, []string{"dlv_3", "dlv_2", "dlv_1"}},
		"page":         {outboxdriver.DeliveryQuery{Limit: 2}, []string{"dlv_6", "dlv_5"}},
	} {
		q := c.q
		q.Account = "acct"
		if q.Limit == 0 {
			q.Limit = 100
		}
		ds, err := s.ListDeliveries(ctx, q)
		var got []string
		for _, d := range ds {
			got = append(got, d.ID)
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s after the migration: %v, %v; want %v", name, got, err, c.want)
		}
	}
	now := time.UnixMicro(1000)
	success := func(d outboxdriver.Delivery, ep outboxdriver.Endpoint) (outboxdriver.Change, error) {
		nd := d
		nd.Status, nd.Attempts, nd.UpdatedAt = outboxdriver.DeliverySucceeded, d.Attempts+1, now
		return outboxdriver.Change{Delivery: &nd, Attempt: &outboxdriver.Attempt{DeliveryID: d.ID, Number: nd.Attempts,
			At: now, ScheduledAt: d.NextAttemptAt, Status: 204, Class: outboxdriver.ClassSuccess}}, nil
	}
	if applied, err := s.Complete(ctx, []outboxdriver.Completion{{DeliveryID: "dlv_3", Token: "tok_old", Decide: success}}); err != nil || !applied[0] {
		t.Fatalf("complete the delivery leased before the migration: %v %v", applied, err)
	}
	jobs, err := s.Claim(ctx, outboxdriver.ClaimParams{Now: now, LeaseUntil: now.Add(time.Minute), Limit: 10, Token: "tok"})
	if err != nil || len(jobs) != 1 || jobs[0].Delivery.ID != "dlv_4" {
		t.Fatalf("claim after the migration: %+v %v", jobs, err)
	}
	if applied, err := s.Complete(ctx, []outboxdriver.Completion{{DeliveryID: "dlv_4", Token: "tok", Decide: success}}); err != nil || !applied[0] {
		t.Fatalf("complete dlv_4: %v %v", applied, err)
	}
	deliveries, events, err := s.Purge(ctx, outboxdriver.PurgeParams{Before: time.UnixMicro(102), Limit: 100})
	if err != nil || deliveries != 4 || events != 2 {
		t.Fatalf("purge: %d deliveries, %d events, %v", deliveries, events, err)
	}
	if ds, err := s.ListDeliveries(ctx, outboxdriver.DeliveryQuery{Account: "acct", Limit: 100}); err != nil || len(ds) != 2 {
		t.Fatalf("after the purge: %+v %v", ds, err)
	}
}
