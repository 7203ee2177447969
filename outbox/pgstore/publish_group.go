package pgstore

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/switchboard-voice/switchboard/internal/sqlrows"
	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
)

// Group commit of publishes (docs/outbox.md §5, "PostgreSQL"). A publish on its own
// is a transaction of about six round trips and a commit (a WAL flush): at a
// few hundred publishes a second the database spends more on their overhead than on
// their rows. Concurrent publishes of a Store instead queue, and a publisher that
// finds a group slot free leads: it takes what is queued (its own publish among
// them, up to maxGroupPublishes) and writes it in one transaction with one
// statement per step (the events, their accounts' endpoints, the leases, the
// deliveries, the attempts), then hands the slot to the next queued publisher, if
// any. Up to maxPublishGroups groups run at once, each on its connection, so that a
// group's round trips overlap another's. Nothing runs in the background.
//
// A publish whose event id exists (a duplicate, a conflict, a repeat within the
// group) is left out of the group's statements and runs on its own after it, as do
// all of a group's publishes when one of its statements fails: the group's
// transaction then commits nothing.

const (
	maxPublishGroups  = 4
	maxGroupPublishes = 256
)

// publishGroups is the queue of publishes waiting for a group.
type publishGroups struct {
	mu      sync.Mutex
	queue   []*groupedPublish
	leaders int
}

// groupedPublish is one Publish in the queue.
type groupedPublish struct {
	ctx  context.Context
	p    outboxdriver.PublishParams
	out  outboxdriver.Published
	err  error
	done chan struct{}
	// lead is signalled when the publisher is to lead the next group; signalled,
	// under publishGroups.mu, says a signal is pending (a publisher holds at most
	// one slot).
	lead      chan struct{}
	signalled bool
}

// publishInGroup stores p in a group's transaction and returns once it committed.
func (s *Store) publishInGroup(ctx context.Context, p outboxdriver.PublishParams) (outboxdriver.Published, error) {
	if err := ctx.Err(); err != nil {
		return outboxdriver.Published{}, err
	}
	r := &groupedPublish{ctx: ctx, p: p, done: make(chan struct{}), lead: make(chan struct{}, 1)}
	g := &s.groups
	g.mu.Lock()
	g.queue = append(g.queue, r)
	if g.leaders < maxPublishGroups {
		g.leaders++
		g.mu.Unlock()
		s.leadGroup()
	} else {
		g.mu.Unlock()
	}
	for {
		select {
		case <-r.done:
			return r.out, r.err
		case <-r.lead:
			g.took(r)
			s.leadGroup()
		case <-ctx.Done():
			if g.withdraw(r) {
				return outboxdriver.Published{}, ctx.Err()
			}
			// A group took it: its transaction decides. ctx's case stays ready, so
			// wait on the others alone.
			select {
			case <-r.done:
				return r.out, r.err
			case <-r.lead:
				g.took(r)
				s.leadGroup()
				<-r.done
				return r.out, r.err
			}
		}
	}
}

// leadGroup runs one group of what is queued, holding a group slot, and then hands
// the slot to the first publisher still queued, or frees it.
func (s *Store) leadGroup() {
	g := &s.groups
	g.mu.Lock()
	n := min(len(g.queue), maxGroupPublishes)
	batch := slices.Clone(g.queue[:n])
	g.queue = slices.Delete(g.queue, 0, n)
	g.mu.Unlock()

	if len(batch) > 0 {
		s.runGroup(batch)
	}

	g.mu.Lock()
	g.handOn()
	g.mu.Unlock()
}

// handOn gives the slot of a group that ended to the first queued publisher that
// has no slot coming, or frees it. g.mu is held.
func (g *publishGroups) handOn() {
	for _, r := range g.queue {
		if !r.signalled {
			r.signalled = true
			r.lead <- struct{}{}
			return
		}
	}
	g.leaders--
}

// took records that r took the slot it was signalled.
func (g *publishGroups) took(r *groupedPublish) {
	g.mu.Lock()
	r.signalled = false
	g.mu.Unlock()
}

// withdraw takes r out of the queue if no group has taken it, handing on the slot if
// it had just been given it, and reports whether it did.
func (g *publishGroups) withdraw(r *groupedPublish) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	i := slices.Index(g.queue, r)
	if i < 0 {
		return false
	}
	g.queue = slices.Delete(g.queue, i, i+1)
	if r.signalled { // a slot it will not use
		<-r.lead
		r.signalled = false
		g.handOn()
	}
	return true
}

// runGroup writes batch in one transaction and reports to each publish; those it
// could not write together run on their own.
func (s *Store) runGroup(batch []*groupedPublish) {
	// Shared by every publisher of the group: none may cancel the others.
	// A group of one takes the same way: its statements are those of a publish on
	// its own, its leases granted in one (and so the suite, which publishes one at a
	// time, runs the group's statements).
	ctx := context.Background()
	if len(batch) == 1 {
		ctx = batch[0].ctx
	}
	var (
		alone []*groupedPublish
		wrote []bool
	)
	err := s.write(ctx, func(q querier) error {
		var err error
		wrote, err = s.publishTogether(ctx, q, batch)
		return err
	})
	for i, r := range batch {
		if err == nil && wrote[i] {
			close(r.done)
		} else {
			alone = append(alone, r)
		}
	}
	for _, r := range alone {
		r.err = s.write(r.ctx, func(q querier) error {
			var err error
			r.out, err = s.publish(r.ctx, q, r.p)
			return err
		})
		close(r.done)
	}
}

// publishTogether writes the publishes of batch whose event is new: their events in
// one statement, their accounts' endpoints read in one, the leases they ask for
// granted in one per time of storing, their deliveries and attempts inserted in one
// each. It reports which it wrote (their out set).
func (s *Store) publishTogether(ctx context.Context, q querier, batch []*groupedPublish) ([]bool, error) {
	n := len(batch)
	ids, accounts, types, datas := make([]string, 0, n), make([]string, 0, n), make([]string, 0, n), make([][]byte, 0, n)
	created, stored, channels := make([]time.Time, 0, n), make([]time.Time, 0, n), make([]string, 0, n)
	for _, r := range batch {
		if r.p.IdempotencyKey != "" {
			continue // its key is taken first, on its own (publish)
		}
		ev := r.p.Event
		ch, _, err := outboxdriver.EncodeEventRouting(ev)
		if err != nil {
			return nil, err
		}
		ids, accounts, types, datas = append(ids, ev.ID), append(accounts, ev.Account), append(types, ev.Type), append(datas, ev.Data)
		created, stored, channels = append(created, ev.CreatedAt), append(stored, r.p.Now), append(channels, ch)
	}
	wrote := make([]bool, n)
	if len(ids) == 0 {
		return wrote, nil
	}
	rs, err := q.query(ctx, s.q(`INSERT INTO outbox_events (id, account, type, created_at, stored_at, data, channels)
		SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::timestamptz[], $5::timestamptz[], $6::bytea[], $7::text[])
		ON CONFLICT (account, id) DO NOTHING RETURNING account, id`), ids, accounts, types, created, stored, datas, channels)
	keys, err := sqlrows.Collect(nil, rs, err,
		func(r sqlrows.Row) (string, error) {
			var account, id string
			err := r.Scan(&account, &id)
			return account + "\x00" + id, err
		})
	if err != nil {
		return nil, fmt.Errorf("pgstore: insert events: %w", err)
	}
	inserted := make(map[string]bool, len(keys))
	for _, k := range keys {
		inserted[k] = true
	}
	var newAccounts []string
	for i, r := range batch {
		if r.p.IdempotencyKey != "" {
			continue
		}
		// The first publish of a new id inserted it; a repeat goes its own way.
		key := r.p.Event.Account + "\x00" + r.p.Event.ID
		if inserted[key] {
			delete(inserted, key)
			wrote[i] = true
			if !slices.Contains(newAccounts, r.p.Event.Account) {
				newAccounts = append(newAccounts, r.p.Event.Account)
			}
		}
	}
	if len(newAccounts) == 0 {
		return wrote, nil
	}
	eps, err := scanEndpoints(q.query(ctx, s.q(`SELECT `+endpointColumns+` FROM outbox_endpoints
		WHERE account = ANY($1) AND removed_at IS NULL ORDER BY account, created_at, id FOR KEY SHARE`), newAccounts))
	if err != nil {
		return nil, err
	}
	byAccount := map[string][]outboxdriver.Endpoint{}
	for _, ep := range eps {
		byAccount[ep.Account] = append(byAccount[ep.Account], ep)
	}
	// Plan every delivery, then grant the leases asked for, per time of storing.
	type planned struct {
		r   *groupedPublish
		d   outboxdriver.Delivery
		a   *outboxdriver.Attempt
		ask bool
	}
	var plans []planned
	for i, r := range batch {
		if !wrote[i] {
			continue
		}
		r.out = outboxdriver.Published{Event: r.p.Event}
		for _, ep := range byAccount[r.p.Event.Account] {
			d, a, ok := r.p.Plan(ep)
			if !ok {
				if why := r.p.Excluded(ep); why != "" {
					r.out.Event.Excluded = append(r.out.Event.Excluded, outboxdriver.Exclusion{EndpointID: ep.ID, Reason: why})
				}
				continue
			}
			// A rate-limited endpoint's deliveries are claimed, which takes them
			// from its bucket (grantLease).
			ask := d.LeaseUntil != nil && d.Status == outboxdriver.DeliveryPending && ep.RateLimit == 0
			if !ask {
				d.LeaseUntil = nil
			}
			plans = append(plans, planned{r: r, d: d, a: a, ask: ask})
		}
		if err := s.recordExcluded(ctx, q, r.out.Event); err != nil {
			return nil, err
		}
	}
	want := map[grantKey]int{}
	for _, pl := range plans {
		if pl.ask {
			want[grantKey{s.nowKey(pl.r.p.Now), pl.d.EndpointID}]++
		}
	}
	granted, base, err := s.grantLeases(ctx, q, want)
	if err != nil {
		return nil, err
	}
	var (
		deliveries []outboxdriver.Delivery
		attempts   []outboxdriver.Attempt
		claimable  bool
	)
	for _, pl := range plans {
		d := pl.d
		if pl.ask {
			k := grantKey{s.nowKey(pl.r.p.Now), d.EndpointID}
			if granted[k] > 0 {
				granted[k]--
				until := utc(base[k.now].Add(d.LeaseUntil.Sub(pl.r.p.Now)))
				d.LeaseUntil = &until
			} else {
				d.LeaseUntil = nil
			}
		}
		if d.Status == outboxdriver.DeliveryPending && d.LeaseUntil == nil {
			claimable = true
		}
		pl.r.out.Deliveries = append(pl.r.out.Deliveries, d)
		deliveries = append(deliveries, d)
		if pl.a != nil {
			attempts = append(attempts, *pl.a)
		}
	}
	if err := s.insertDeliveries(ctx, q, deliveries); err != nil {
		return nil, err
	}
	if err := s.insertAttempts(ctx, q, attempts); err != nil {
		return nil, err
	}
	if claimable && s.notify.due() {
		if err := s.sendWakeup(ctx, q); err != nil {
			return nil, err
		}
	}
	return wrote, nil
}

// grantKey is an endpoint's publish leases at one time of storing (zero: the
// database's clock).
type grantKey struct {
	now      time.Time
	endpoint string
}

// nowKey is the time of storing a grant is made at: zero for the database's clock.
func (s *Store) nowKey(now time.Time) time.Time {
	if s.opts.CallerTime {
		return now
	}
	return time.Time{}
}

// grantLeasesSQL leases up to $2[i] more deliveries of endpoint $1[i] as they are
// published, as grantLeaseSQL does one: on endpoints that take deliveries at the
// time of storing ($3, NULL for now()), within their room, whose row no claim or
// completion holds (skipped, not waited for). It returns each endpoint's grant and
// the time of storing the leases start from.
const grantLeasesSQL = `WITH want AS (
    SELECT * FROM unnest($1::text[], $2::int[]) AS w(id, n)
), grants AS (
    SELECT e.id, least(w.n, e.in_flight_cap - e.in_flight) AS n
    FROM outbox_endpoints e JOIN want w ON w.id = e.id
    WHERE e.status = 'ACTIVE' AND e.removed_at IS NULL AND e.in_flight < e.in_flight_cap
      AND (e.hold_until IS NULL OR e.hold_until <= coalesce($3::timestamptz, now()))
    ORDER BY e.id
    FOR NO KEY UPDATE OF e SKIP LOCKED
)
UPDATE outbox_endpoints e SET in_flight = e.in_flight + g.n FROM grants g WHERE e.id = g.id
RETURNING e.id, g.n, coalesce($3::timestamptz, now())`

// grantLeases grants the leases want asks for, by time of storing and endpoint, and
// returns the grants and, per time, the time of storing the leases start from.
func (s *Store) grantLeases(ctx context.Context, q querier, want map[grantKey]int) (map[grantKey]int, map[time.Time]time.Time, error) {
	byTime := map[time.Time][]grantKey{}
	for k := range want {
		byTime[k.now] = append(byTime[k.now], k)
	}
	granted := make(map[grantKey]int, len(want))
	base := make(map[time.Time]time.Time, len(byTime))
	for now, keys := range byTime {
		ids, counts := make([]string, len(keys)), make([]int32, len(keys))
		for i, k := range keys {
			ids[i], counts[i] = k.endpoint, int32(want[k])
		}
		var at *time.Time
		if !now.IsZero() {
			at = &now
		}
		rs, err := q.query(ctx, s.q(grantLeasesSQL), ids, counts, at)
		if err != nil {
			return nil, nil, fmt.Errorf("pgstore: publish leases: %w", err)
		}
		_, err = sqlrows.Collect(nil, rs, nil, func(r sqlrows.Row) (struct{}, error) {
			var (
				id string
				n  int32
				t  time.Time
			)
			err := r.Scan(&id, &n, &t)
			granted[grantKey{now, id}], base[now] = int(n), t
			return struct{}{}, err
		})
		if err != nil {
			return nil, nil, fmt.Errorf("pgstore: publish leases: %w", err)
		}
	}
	return granted, base, nil
}
