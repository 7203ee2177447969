package pgstore_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/switchboard-voice/switchboard/internal/pgtest"
	"github.com/switchboard-voice/switchboard/outbox/outboxtest"
	"github.com/switchboard-voice/switchboard/outbox/pgstore"
)

var ctx = context.Background()

// openStore opens a store on a fresh schema of its own, closed when t ends.
func openStore(t testing.TB, opts pgstore.Options) *pgstore.Store {
	t.Helper()
	u, _ := pgtest.Schema(t)
	return openURL(t, u, opts)
}

// openURL opens another store on the schema of u: another node.
func openURL(t testing.TB, u string, opts pgstore.Options) *pgstore.Store {
	t.Helper()
	st, err := pgstore.OpenURL(ctx, u, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// checkInFlight fails t unless every endpoint's in-flight count is the number of its
// leased deliveries: the count the claim trusts is kept by every writer.
func checkInFlight(t testing.TB, st *pgstore.Store) {
	t.Helper()
	rows, err := st.Pool().Query(ctx, `SELECT e.id, e.in_flight,
		(SELECT count(*) FROM `+pgx.Identifier{st.Schema(), "outbox_deliveries"}.Sanitize()+` d WHERE d.endpoint_id = e.id AND d.lease_until IS NOT NULL)
		FROM `+pgx.Identifier{st.Schema(), "outbox_endpoints"}.Sanitize()+` e`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			id          string
			count, real int
		)
		if err := rows.Scan(&id, &count, &real); err != nil {
			t.Fatal(err)
		}
		if count != real {
			t.Errorf("endpoint %s counts %d leases in flight, holds %d", id, count, real)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
}

// TestConformance runs the shared store suite on PostgreSQL, each test on a schema of
// its own, in parallel; the times of the parameters are the reference (CallerTime),
// as the suite pins them. After each test, every endpoint's in-flight count matches
// its leases.
func TestConformance(t *testing.T) {
	outboxtest.Run(t, func(t *testing.T) outboxtest.Bundle {
		st := openStore(t, pgstore.Options{CallerTime: true})
		t.Cleanup(func() { checkInFlight(t, st) })
		return outboxtest.Bundle{Store: st, BeginTx: func(ctx context.Context) (outboxtest.Tx, error) {
			tx, err := st.Pool().Begin(ctx)
			if err != nil {
				return outboxtest.Tx{}, err
			}
			return outboxtest.Tx{Tx: tx, Commit: func() error { return tx.Commit(ctx) }, Rollback: func() error { return tx.Rollback(ctx) }}, nil
		}}
	})
}
