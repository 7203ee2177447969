package pgstore_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver

	"github.com/switchboard-voice/switchboard/internal/pgtest"
	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
	"github.com/switchboard-voice/switchboard/outbox/pgstore"
)

// Tests of what several nodes on one database rely on (docs/outbox.md §5): each store
// stands for a node, with a pool and a listener of its own, on one schema.

func endpoint(id string, capacity int) outboxdriver.Endpoint {
	return outboxdriver.Endpoint{ID: id, Account: "acct", URL: "https://example.com/" + id, Events: []string{"*"},
		Profile: "standard", Status: outboxdriver.EndpointActive, CreatedAt: time.Now().UTC().Truncate(time.Microsecond), InFlightCap: capacity}
}

func create(t *testing.T, st *pgstore.Store, eps ...outboxdriver.Endpoint) {
	t.Helper()
	for _, ep := range eps {
		if err := st.CreateEndpoint(ctx, outboxdriver.CreateEndpointParams{Endpoint: ep,
			Audit: outboxdriver.AuditEntry{Account: ep.Account, EndpointID: ep.ID, Action: outboxdriver.AuditCreated, At: ep.CreatedAt}}); err != nil {
			t.Fatal(err)
		}
	}
}

// plan plans one PENDING delivery due at due for every endpoint, leased until lease
// when lease is not nil.
func plan(ev outboxdriver.Event, due time.Time, lease *time.Time) outboxdriver.PlanFunc {
	return func(ep outboxdriver.Endpoint) (outboxdriver.Delivery, *outboxdriver.Attempt, bool) {
		return outboxdriver.Delivery{ID: "dlv_" + ev.ID + "_" + ep.ID, Account: ev.Account, EventID: ev.ID, EventType: ev.Type,
			EndpointID: ep.ID, Status: outboxdriver.DeliveryPending, NextAttemptAt: due, CreatedAt: due, UpdatedAt: due,
			LeaseUntil: lease}, nil, true
	}
}

func publishOn(t *testing.T, st *pgstore.Store, tx any, id string, now time.Time) outboxdriver.Published {
	t.Helper()
	ev := outboxdriver.Event{ID: id, Account: "acct", Type: "call.status", CreatedAt: now, Data: json.RawMessage(`{"n":1}`)}
	pub, err := st.Publish(ctx, outboxdriver.PublishParams{Tx: tx, Event: ev, Now: now, Plan: plan(ev, now, nil)})
	if err != nil {
		t.Fatal(err)
	}
	return pub
}

// dbNow is the database's clock.
func dbNow(t *testing.T, st *pgstore.Store) time.Time {
	t.Helper()
	var now time.Time
	if err := st.Pool().QueryRow(ctx, `SELECT clock_timestamp()`).Scan(&now); err != nil {
		t.Fatal(err)
	}
	return now.UTC()
}

func reapDecision(count func(id string)) outboxdriver.DecideFunc {
	return func(d outboxdriver.Delivery, _ outboxdriver.Endpoint) (outboxdriver.Change, error) {
		count(d.ID)
		nd := d
		nd.Attempts++
		nd.UpdatedAt = time.Now().UTC()
		return outboxdriver.Change{At: nd.UpdatedAt, Delivery: &nd}, nil
	}
}

// TestReapOnEveryNode: reapers of three nodes running at once settle each expired
// lease once, and none of a lease still running (the database's clock decides, not
// the nodes' skewed ones).
func TestReapOnEveryNode(t *testing.T) {
	t.Parallel()
	u, _ := pgtest.Schema(t)
	nodes := []*pgstore.Store{openURL(t, u, pgstore.Options{}), openURL(t, u, pgstore.Options{}), openURL(t, u, pgstore.Options{})}
	create(t, nodes[0], endpoint("ep_a", 1000), endpoint("ep_b", 1000))
	now := nodes[0].Clock().Now()
	for i := range 60 {
		publishOn(t, nodes[i%3], nil, fmt.Sprintf("evt_%d", i), now)
	}
	// 100 leases that ended a second ago by the database's clock, 20 that run an hour.
	expired, err := nodes[1].Claim(ctx, outboxdriver.ClaimParams{Now: now, LeaseUntil: now.Add(-time.Second), Limit: 100, Token: "short"})
	if err != nil || len(expired) != 100 {
		t.Fatalf("claimed %d, %v", len(expired), err)
	}
	running, err := nodes[2].Claim(ctx, outboxdriver.ClaimParams{Now: now, LeaseUntil: now.Add(time.Hour), Limit: 100, Token: "long"})
	if err != nil || len(running) != 20 {
		t.Fatalf("claimed %d, %v", len(running), err)
	}
	var (
		mu      sync.Mutex
		decided = map[string]int{}
		wg      sync.WaitGroup
		total   int
	)
	count := func(id string) { mu.Lock(); decided[id]++; mu.Unlock() }
	for i, st := range nodes {
		// Skewed node clocks, an hour behind and ahead: they do not decide.
		skew := time.Duration(i-1) * time.Hour
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				n, err := st.Reap(ctx, outboxdriver.ReapParams{Now: now.Add(skew), Limit: 7, Decide: reapDecision(count)})
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				total += n
				mu.Unlock()
				if n == 0 {
					return
				}
			}
		}()
	}
	wg.Wait()
	if total != 100 || len(decided) != 100 {
		t.Fatalf("reaped %d (%d distinct), want the 100 expired leases", total, len(decided))
	}
	for id, n := range decided {
		if n != 1 {
			t.Fatalf("%s decided %d times", id, n)
		}
	}
	for _, j := range running {
		if decided[j.Delivery.ID] > 0 {
			t.Fatalf("a running lease was reaped: %s", j.Delivery.ID)
		}
	}
	checkInFlight(t, nodes[0])
}

// TestClaimsOnEveryNodeKeepTheCap: claims racing from three nodes never lease an
// endpoint past its cap, nor a delivery twice. A claim that finds an endpoint's row
// held by another skips it (it does not wait), so the claimers go on until everything
// claimable is leased; then no node can claim more.
func TestClaimsOnEveryNodeKeepTheCap(t *testing.T) {
	t.Parallel()
	u, _ := pgtest.Schema(t)
	nodes := []*pgstore.Store{openURL(t, u, pgstore.Options{}), openURL(t, u, pgstore.Options{}), openURL(t, u, pgstore.Options{})}
	create(t, nodes[0], endpoint("ep_capped", 7), endpoint("ep_wide", 1000))
	now := nodes[0].Clock().Now()
	for i := range 100 {
		publishOn(t, nodes[0], nil, fmt.Sprintf("evt_%d", i), now)
	}
	var (
		mu    sync.Mutex
		seen  = map[string]bool{}
		per   = map[string]int{}
		total int
		wg    sync.WaitGroup
	)
	const claimable = 7 + 100
	deadline := time.Now().Add(30 * time.Second)
	claim := func(st *pgstore.Store, token string) int {
		jobs, err := st.Claim(ctx, outboxdriver.ClaimParams{Now: now, LeaseUntil: now.Add(time.Minute), Limit: 3, Token: token})
		if err != nil {
			t.Error(err)
			return -1
		}
		mu.Lock()
		defer mu.Unlock()
		for _, j := range jobs {
			if seen[j.Delivery.ID] {
				t.Errorf("%s claimed twice", j.Delivery.ID)
			}
			seen[j.Delivery.ID] = true
			per[j.Endpoint.ID]++
			total++
		}
		return total
	}
	for i, st := range nodes {
		for g := range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for n := 0; n >= 0 && n < claimable && time.Now().Before(deadline); {
					n = claim(st, fmt.Sprintf("tok_%d_%d", i, g))
				}
			}()
		}
	}
	wg.Wait()
	for i, st := range nodes {
		claim(st, fmt.Sprintf("tok_after_%d", i))
	}
	if per["ep_capped"] != 7 || per["ep_wide"] != 100 {
		t.Fatalf("leased per endpoint %v, want ep_capped at its cap 7 and all 100 of ep_wide", per)
	}
	checkInFlight(t, nodes[0])
}

// TestDatabaseClockDecides: without CallerTime, what is due, held and expired is
// decided by the database's clock, and a lease lasts LeaseUntil minus Now from it,
// whatever the caller's clock says.
func TestDatabaseClockDecides(t *testing.T) {
	t.Parallel()
	st := openStore(t, pgstore.Options{})
	held := endpoint("ep_held", 10)
	holdUntil := dbNow(t, st).Add(time.Hour)
	held.HoldUntil = &holdUntil
	create(t, st, endpoint("ep_a", 10))
	due := dbNow(t, st)
	publishOn(t, st, nil, "evt_1", due)
	behind := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

	before := dbNow(t, st)
	jobs, err := st.Claim(ctx, outboxdriver.ClaimParams{Now: behind, LeaseUntil: behind.Add(time.Minute), Limit: 10, Token: "tok"})
	after := dbNow(t, st)
	if err != nil || len(jobs) != 1 {
		t.Fatalf("a claim from a clock 26 years behind: %d jobs, %v; want the delivery due by the database", len(jobs), err)
	}
	if l := *jobs[0].Delivery.LeaseUntil; l.Before(before.Add(time.Minute).Add(-time.Second)) || l.After(after.Add(time.Minute)) {
		t.Fatalf("leased until %v, want a minute from the database's now (%v..%v)", l, before, after)
	}
	ahead := time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)
	if n, err := st.Reap(ctx, outboxdriver.ReapParams{Now: ahead, Limit: 10, Decide: reapDecision(func(string) {})}); n != 0 || err != nil {
		t.Fatalf("a clock 74 years ahead reaped %d running leases, %v", n, err)
	}

	// A hold counts by the database's clock too: a publish from a clock past the hold
	// gets no lease.
	create(t, st, held)
	lease := ahead.Add(time.Minute)
	ev := outboxdriver.Event{ID: "evt_2", Account: "acct", Type: "call.status", CreatedAt: ahead, Data: json.RawMessage(`{}`)}
	pub, err := st.Publish(ctx, outboxdriver.PublishParams{Event: ev, Now: ahead, Plan: func(ep outboxdriver.Endpoint) (outboxdriver.Delivery, *outboxdriver.Attempt, bool) {
		d, a, _ := plan(ev, due, &lease)(ep)
		return d, a, ep.ID == "ep_held"
	}})
	if err != nil || len(pub.Deliveries) != 1 || pub.Deliveries[0].LeaseUntil != nil {
		t.Fatalf("publish to a held endpoint from a clock past the hold: %+v %v", pub.Deliveries, err)
	}
	// The store's clock is the database's.
	lo := dbNow(t, st)
	c := st.Clock().Now()
	hi := dbNow(t, st)
	if c.Before(lo.Add(-time.Second)) || c.After(hi.Add(time.Second)) {
		t.Fatalf("Clock %v, database %v..%v", c, lo, hi)
	}
}

// TestWakeupsAcrossNodes: a publish on one node wakes the subscribers of another when
// it commits (in the caller's transaction too); a listener that loses its connection
// wakes them once, listens again, and is woken again by the next publish.
func TestWakeupsAcrossNodes(t *testing.T) {
	t.Parallel()
	u, _ := pgtest.Schema(t)
	a := openURL(t, u, pgstore.Options{NotifyCooldown: time.Nanosecond})
	b := openURL(t, u, pgstore.Options{})
	<-pgstore.Listening(b)
	create(t, a, endpoint("ep_a", 10))
	sub, cancel := context.WithCancel(ctx)
	defer cancel()
	woken := b.Wakeups(sub)
	wait := func(what string) {
		t.Helper()
		select {
		case <-woken:
		case <-time.After(20 * time.Second):
			t.Fatalf("no wake-up: %s", what)
		}
	}
	publishOn(t, a, nil, "evt_1", a.Clock().Now())
	wait("a publish on another node")

	tx, err := a.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	publishOn(t, a, tx, "evt_2", a.Clock().Now())
	select {
	case <-woken:
		t.Fatal("woken before the caller's transaction committed")
	default:
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	wait("the caller's transaction's commit")

	// The listener's connection dies: its subscribers are woken, it listens again.
	if _, err := a.Pool().Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE application_name = 'switchboard-outbox-listener' AND query LIKE 'LISTEN %' AND query LIKE '%'||$1||'%'`, b.Schema()); err != nil {
		t.Fatal(err)
	}
	wait("the listener's connection lost")
	<-pgstore.Listening(b)
	publishOn(t, a, nil, "evt_3", a.Clock().Now())
	wait("a publish after the listener came back")
}

// TestPublishTx: the event a caller's transaction publishes, with a pgx.Tx or a
// *sql.Tx of pgx's database/sql driver (whose search_path is another schema), exists
// only if the caller commits, with the caller's own row.
func TestPublishTx(t *testing.T) {
	t.Parallel()
	st := openStore(t, pgstore.Options{})
	create(t, st, endpoint("ep_a", 10))
	orders := pgx.Identifier{st.Schema(), "orders"}.Sanitize()
	if _, err := st.Pool().Exec(ctx, `CREATE TABLE `+orders+` (id text PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	sqlDB, err := sql.Open("pgx", pgtest.URL()) // the database's default schema
	if err != nil {
		t.Fatal(err)
	}
	defer sqlDB.Close()
	type callerTx struct {
		tx               any
		exec             func(q string, args ...any) error
		commit, rollback func() error
	}
	begin := map[string]func() callerTx{
		"pgx.Tx": func() callerTx {
			tx, err := st.Pool().Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			return callerTx{tx, func(q string, args ...any) error { _, err := tx.Exec(ctx, q, args...); return err },
				func() error { return tx.Commit(ctx) }, func() error { return tx.Rollback(ctx) }}
		},
		"*sql.Tx": func() callerTx {
			tx, err := sqlDB.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			return callerTx{tx, func(q string, args ...any) error { _, err := tx.ExecContext(ctx, q, args...); return err },
				tx.Commit, tx.Rollback}
		},
	}
	for kind, newTx := range begin {
		for _, commit := range []bool{true, false} {
			id := fmt.Sprintf("%s_%v", map[string]string{"pgx.Tx": "pgx", "*sql.Tx": "sql"}[kind], commit)
			tx := newTx()
			if err := tx.exec(`INSERT INTO `+orders+` (id) VALUES ($1)`, id); err != nil {
				t.Fatal(err)
			}
			pub := publishOn(t, st, tx.tx, "evt_"+id, st.Clock().Now())
			if len(pub.Deliveries) != 1 {
				t.Fatalf("%s: %d deliveries", kind, len(pub.Deliveries))
			}
			if commit {
				err = tx.commit()
			} else {
				err = tx.rollback()
			}
			if err != nil {
				t.Fatal(err)
			}
			_, err := st.GetEvent(ctx, outboxdriver.GetEventParams{Account: "acct", ID: "evt_" + id})
			_, _, derr := st.GetDelivery(ctx, outboxdriver.GetDeliveryParams{Account: "acct", ID: pub.Deliveries[0].ID})
			var n int
			if err := st.Pool().QueryRow(ctx, `SELECT count(*) FROM `+orders+` WHERE id = $1`, id).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if commit != (err == nil) || commit != (derr == nil) || commit != (n == 1) {
				t.Fatalf("%s, commit %v: event %v, delivery %v, the caller's row %d", kind, commit, err, derr, n)
			}
			if !commit && (!errors.Is(err, outboxdriver.ErrNotFound) || !errors.Is(derr, outboxdriver.ErrNotFound)) {
				t.Fatalf("%s rolled back: %v %v", kind, err, derr)
			}
		}
	}
}

// TestOpenConcurrently: nodes opening one empty schema at once all open, and the
// schema is migrated once.
func TestOpenConcurrently(t *testing.T) {
	t.Parallel()
	u, schema := pgtest.Schema(t)
	const n = 5
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, err := pgstore.OpenURL(ctx, u, pgstore.Options{})
			if err == nil {
				err = st.Close()
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	st := openURL(t, u, pgstore.Options{})
	var versions []int64
	rows, err := st.Pool().Query(ctx, `SELECT version FROM `+pgx.Identifier{schema, pgstore.MigrationTable}.Sanitize()+` ORDER BY version`)
	if err == nil {
		versions, err = pgx.CollectRows(rows, pgx.RowTo[int64])
	}
	var want []int64
	names, _ := fs.Glob(pgstore.Migrations(), "*.sql")
	for _, name := range names {
		v, _ := strconv.ParseInt(strings.SplitN(name, "_", 2)[0], 10, 64)
		want = append(want, v)
	}
	if err != nil || fmt.Sprint(versions) != fmt.Sprint(want) {
		t.Fatalf("versions recorded %v, %v; want %v once each", versions, err, want)
	}
}

// TestOpenRefusesBadOptions: bad options are reported together, a schema that does
// not exist is refused, and nothing is left running.
func TestOpenRefusesBadOptions(t *testing.T) {
	t.Parallel()
	u, _ := pgtest.Schema(t)
	_, err := pgstore.OpenURL(ctx, u, pgstore.Options{NotifyCooldown: -time.Second, ClockSync: time.Millisecond})
	var ve *outboxdriver.ValidationError
	if !errors.Is(err, outboxdriver.ErrInvalid) || !errors.As(err, &ve) || fmt.Sprint(err) == "" {
		t.Fatalf("bad options: %v", err)
	}
	for _, field := range []string{"Options.NotifyCooldown", "Options.ClockSync"} {
		if !containsField(err, field) {
			t.Fatalf("%v does not name %s", err, field)
		}
	}
	if _, err := pgstore.OpenURL(ctx, u, pgstore.Options{Schema: "no_such_schema"}); !errors.Is(err, outboxdriver.ErrInvalid) {
		t.Fatalf("a missing schema: %v", err)
	}
	if _, err := pgstore.OpenURL(ctx, "postgres://%zz", pgstore.Options{}); !errors.Is(err, outboxdriver.ErrInvalid) {
		t.Fatalf("a bad URL: %v", err)
	}
}

func containsField(err error, field string) bool {
	var joined interface{ Unwrap() []error }
	if errors.As(err, &joined) {
		for _, e := range joined.Unwrap() {
			if containsField(e, field) {
				return true
			}
		}
	}
	var ve *outboxdriver.ValidationError
	return errors.As(err, &ve) && ve.Field == field
}
