package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/switchboard-voice/switchboard/internal/exampleapp"
	"github.com/switchboard-voice/switchboard/internal/pgtest"
)

// Nodes of a cluster test hold short leases: a killed node's calls and deliveries are
// taken over within seconds. The outbox's lease covers a claimed delivery's wait for a
// worker too: at 4 s, nodes starved of CPU (a loaded CI machine) saw live leases reaped.
var clusterFlags = []string{"--node-lease", "1s", "--outbox-lease", "8s"}

// startCluster spawns n `switchboard serve` processes on dbURL at once (they migrate
// the database together), node-0 … node-<n-1>, each sending its own User-Agent so
// that a receiver knows which node attempted a delivery, and waits until all listen.
func startCluster(t testing.TB, dbURL string, n int) []*serveProcess {
	t.Helper()
	nodes := make([]*serveProcess, n)
	for i := range nodes {
		id := fmt.Sprintf("node-%d", i)
		nodes[i] = spawnServe(t, dbURL, append([]string{"--node-id", id, "--http-user-agent", id}, clusterFlags...))
	}
	for _, p := range nodes {
		p.awaitListening()
	}
	return nodes
}

// pgQuery runs one query returning an integer on dbURL.
func pgCount(t testing.TB, dbURL, query string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, query).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// pollUntil polls cond every 20 ms until it holds, or fails t after d.
func pollUntil(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after %v", what, d)
		}
		<-tick.C
	}
}

// pgRows is the rows of query, each as its values.
func pgRows(t testing.TB, dbURL, query string) [][]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, query)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	defer rows.Close()
	var out [][]any
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, vals)
	}
	return out
}

// TestClusterMigratesOnceAndSharesCalls: three nodes starting at once on an empty
// schema migrate it once; each lists the calls of the others; live control sent to a
// node that does not run the call reaches it; a node SIGKILLed has its active call
// recorded as ended by another once its lease expired, the reason naming it.
func TestClusterMigratesOnceAndSharesCalls(t *testing.T) {
	t.Parallel()
	dbURL, _ := pgtest.Schema(t)
	nodes := startCluster(t, dbURL, 3)
	for _, table := range []string{"outbox_migrations", "node_migrations"} {
		rows := pgCount(t, dbURL, `SELECT count(*) FROM `+table)
		if distinct := pgCount(t, dbURL, `SELECT count(DISTINCT version) FROM `+table); rows == 0 || rows != distinct {
			t.Fatalf("%s: %d rows, %d versions", table, rows, distinct)
		}
	}
	app := &exampleapp.WSApp{Waiting: true}
	wsApp := httptest.NewServer(app)
	defer wsApp.Close()
	wsURL := "ws" + strings.TrimPrefix(wsApp.URL, "http")
	a := nodes[1].account()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sid := nodes[0].startCallTo(a, wsURL)
	if err := app.WaitLive(ctx, 1); err != nil {
		t.Fatal(err)
	}
	var listed []struct {
		CallSid string `json:"call_sid"`
		Node    string `json:"node"`
		Active  bool   `json:"active"`
	}
	if code, raw := nodes[2].do("GET", "/v1/Accounts/"+a.AccountSid+"/Calls", a.APIToken, nil, &listed); code != http.StatusOK ||
		len(listed) != 1 || listed[0].CallSid != sid || listed[0].Node != "node-0" || !listed[0].Active {
		t.Fatalf("node-2 lists %d %s", code, raw)
	}
	if code, raw := nodes[2].do("POST", "/v1/Accounts/"+a.AccountSid+"/Calls/"+sid, a.APIToken, map[string]any{"call_status": "completed"}, nil); code != http.StatusAccepted {
		t.Fatalf("hangup sent to node-2: %d %s", code, raw)
	}
	if c := nodes[1].waitCall(a, sid); c.Reason != "api-hangup" {
		t.Fatalf("the call ended with %q, want api-hangup", c.Reason)
	}

	// node-0 dies with a call in session.
	sid2 := nodes[0].startCallTo(a, wsURL)
	if err := app.WaitLive(ctx, 1); err != nil {
		t.Fatal(err)
	}
	nodes[0].kill()
	// Answered (a REST call is in progress before its call hook), so completed.
	if c := nodes[2].waitCall(a, sid2); c.Reason != "node-lost:node-0" || c.CallStatus != "completed" {
		t.Fatalf("the killed node's call: %+v", c)
	}
}

// clusterLedger is the receiver of the kill test: a deliveryLedger that also keeps
// every request by node (User-Agent), and any attempt of a delivery that began while
// another attempt of it was still in progress.
type clusterLedger struct {
	*deliveryLedger
	byNode   map[string]map[string]bool
	inFlight map[string]int
	overlaps []string
}

func (l *clusterLedger) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id, node := r.Header.Get("webhook-id"), r.Header.Get("User-Agent")
	l.mu.Lock()
	if l.byNode[id] == nil {
		l.byNode[id] = map[string]bool{}
	}
	l.byNode[id][node] = true
	l.inFlight[id]++
	if l.inFlight[id] > 1 {
		l.overlaps = append(l.overlaps, id+" by "+node)
	}
	l.recordLocked(id)
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		l.inFlight[id]--
		l.mu.Unlock()
	}()
	answerAfterLatency(w, r)
}

// publisher publishes events with their ids through the nodes in turn; an event whose
// node does not answer is published again through the next (the id makes it one
// event).
type publisher struct {
	t      testing.TB
	client *http.Client
	nodes  []*serveProcess
	token  string
	down   []atomic.Bool
	failed atomic.Int64
}

func (p *publisher) publish(i int) {
	body, _ := json.Marshal(map[string]any{"id": fmt.Sprintf("evt-%d", i), "type": "load.test", "data": map[string]int{"n": i}})
	for try := 0; try < 3*len(p.nodes); try++ {
		n := (i + try) % len(p.nodes)
		if p.down[n].Load() {
			continue
		}
		req, _ := http.NewRequest("POST", p.nodes[n].base+"/api/v1/events", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+p.token)
		resp, err := p.client.Do(req)
		if err != nil {
			continue
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusCreated || resp.StatusCode == http.StatusOK {
			return
		}
	}
	p.failed.Add(1)
}

// TestClusterKillOneOfThree: three nodes on one database deliver 20,000 events to a
// loopback receiver while one of them is SIGKILLed mid-run. Every event arrives; the
// duplicates are no more than the deliveries in flight at the kill, nor than the
// leases the reaper took back (one lease_expired attempt each), and every duplicated
// event had a copy from the killed node or a lease taken back; no delivery is ever
// attempted by two nodes at once.
func TestClusterKillOneOfThree(t *testing.T) {
	if testing.Short() {
		t.Skip("publishes 20,000 events through three nodes")
	}
	const events = 20000
	dbURL, _ := pgtest.Schema(t)
	ledger := &clusterLedger{deliveryLedger: newDeliveryLedger(events), byNode: map[string]map[string]bool{}, inFlight: map[string]int{}}
	rc := httptest.NewServer(ledger)
	defer rc.Close()
	nodes := startCluster(t, dbURL, 3)
	a := nodes[0].account()
	var ep map[string]any
	if code, raw := nodes[1].do("POST", "/api/v1/webhooks", a.APIToken, map[string]any{"url": rc.URL + "/hook",
		"policy": map[string]any{"allowHttp": true, "maxInFlight": 96}}, &ep); code != http.StatusCreated {
		t.Fatalf("create endpoint: %d %s", code, raw)
	}
	pub := &publisher{t: t, client: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 16}},
		nodes: nodes, token: a.APIToken, down: make([]atomic.Bool, len(nodes))}
	defer pub.client.CloseIdleConnections()
	var next atomic.Int64
	var publishers sync.WaitGroup
	for range 12 {
		publishers.Add(1)
		go func() {
			defer publishers.Done()
			for i := int(next.Add(1)) - 1; i < events; i = int(next.Add(1)) - 1 {
				pub.publish(i)
			}
		}()
	}

	const victim = 1
	select {
	case <-ledger.quarter:
	case <-time.After(3 * time.Minute):
		t.Fatalf("a quarter of the events did not arrive in time")
	}
	pub.down[victim].Store(true)
	nodes[victim].kill()
	atKill, _ := ledger.counts()
	leasedAtKill := pgCount(t, dbURL, `SELECT count(*) FROM outbox_deliveries WHERE lease_until IS NOT NULL AND status = 'PENDING'`)
	publishers.Wait()
	if n := pub.failed.Load(); n > 0 {
		t.Fatalf("%d events could not be published through any node", n)
	}
	pollUntil(t, 5*time.Minute, "every delivery recorded as succeeded", func() bool {
		return pgCount(t, dbURL, `SELECT count(*) FROM outbox_deliveries WHERE status <> 'SUCCEEDED'`) == 0 &&
			pgCount(t, dbURL, `SELECT count(*) FROM outbox_deliveries`) == events
	})
	total, unique := ledger.counts()
	duplicates := total - unique
	reaped := pgCount(t, dbURL, `SELECT count(*) FROM outbox_attempts WHERE class = 'lease_expired'`)
	t.Logf("at the kill: %d requests received, %d deliveries leased by all nodes; ledger: %d requests, %d events, %d duplicates; %d deliveries of the killed node reaped",
		atKill, leasedAtKill, total, unique, duplicates, reaped)
	if unique != events {
		t.Fatalf("%d distinct events arrived, want %d", unique, events)
	}
	for i := range events {
		if ledger.seen[fmt.Sprintf("evt-%d", i)] == 0 {
			t.Fatalf("evt-%d never arrived", i)
		}
	}
	if len(ledger.overlaps) > 0 {
		t.Fatalf("%d attempts began while another of the same delivery was in progress, e.g. %v", len(ledger.overlaps), ledger.overlaps[0])
	}
	if duplicates > leasedAtKill {
		t.Fatalf("%d duplicates, more than the %d deliveries leased by all nodes at the kill", duplicates, leasedAtKill)
	}
	if duplicates > reaped {
		t.Fatalf("%d duplicates, more than the killed node's %d deliveries in flight at the kill", duplicates, reaped)
	}
	// A duplicate comes from a lease taken back: the killed node's, or, on a machine
	// loaded enough that a live node's lease ran out before its completion was
	// recorded, a live node's (seen under -race -count=3 beside a CI run). Either way
	// the reaper recorded a lease_expired attempt on that delivery.
	for id, n := range ledger.seen {
		if n > 1 && !ledger.byNode[id][fmt.Sprintf("node-%d", victim)] &&
			pgCount(t, dbURL, fmt.Sprintf(`SELECT count(*) FROM outbox_attempts a JOIN outbox_deliveries d ON d.id = a.delivery_id
				WHERE d.event_id = '%s' AND a.class = 'lease_expired'`, id)) == 0 {
			t.Fatalf("%s arrived %d times, none of them from the killed node and no lease of it taken back", id, n)
		}
	}
}

// TestNodeLosesItsDatabase: a node whose PostgreSQL connection is cut while it has
// deliveries in flight and a call in session keeps answering what needs no database
// (/healthz, /metrics, its live call: read and hung up), reports not ready (/readyz
// 503), and once the database is back reports ready, records what ended meanwhile,
// records or retries what was in flight and claims again: every event delivered.
func TestNodeLosesItsDatabase(t *testing.T) {
	t.Parallel()
	dbURL, _ := pgtest.Schema(t)
	proxy, viaProxy := pgtest.NewCutProxy(t, dbURL)
	gate := newRequestGate(100)
	var mu sync.Mutex
	seen := map[string]int{}
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.Header.Get("webhook-id")]++
		mu.Unlock()
		if !gate.hold(r) {
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer rc.Close()
	defer gate.open()
	p := spawnServe(t, viaProxy, append([]string{"--node-id", "solo"}, clusterFlags...))
	p.awaitListening()
	a := p.account()
	var ep map[string]any
	if code, raw := p.do("POST", "/api/v1/webhooks", a.APIToken, map[string]any{"url": rc.URL + "/hook",
		"policy": map[string]any{"allowHttp": true}}, &ep); code != http.StatusCreated {
		t.Fatalf("create endpoint: %d %s", code, raw)
	}
	const before = 20
	for i := range before {
		if code, raw := p.do("POST", "/api/v1/events", a.APIToken, map[string]any{"id": fmt.Sprintf("evt-%d", i), "type": "x", "data": i}, nil); code != http.StatusCreated {
			t.Fatalf("publish: %d %s", code, raw)
		}
	}
	<-gate.arrived // a delivery is in flight, held by the receiver
	app := &exampleapp.WSApp{Waiting: true}
	wsApp := httptest.NewServer(app)
	defer wsApp.Close()
	sid := p.startCallTo(a, "ws"+strings.TrimPrefix(wsApp.URL, "http"))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := app.WaitLive(ctx, 1); err != nil {
		t.Fatal(err)
	}

	proxy.SetCut(true)
	status := func(path string) int {
		resp, err := http.Get(p.base + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	pollUntil(t, 30*time.Second, "/readyz 503 without the database", func() bool { return status("/readyz") == http.StatusServiceUnavailable })
	if code := status("/healthz"); code != http.StatusOK {
		t.Fatalf("/healthz without the database: %d", code)
	}
	if code := status("/metrics"); code != http.StatusOK {
		t.Fatalf("/metrics without the database: %d", code)
	}
	// Its live call stays readable and controllable: its state is in the node's
	// memory, the caller's token remembered.
	var live serveCall
	if code, raw := p.do("GET", "/v1/Accounts/"+a.AccountSid+"/Calls/"+sid, a.APIToken, nil, &live); code != http.StatusOK || !live.Active {
		t.Fatalf("reading the live call without the database: %d %s", code, raw)
	}
	if code, raw := p.do("POST", "/v1/Accounts/"+a.AccountSid+"/Calls/"+sid, a.APIToken, map[string]any{"call_status": "completed"}, nil); code != http.StatusAccepted {
		t.Fatalf("hanging up the live call without the database: %d %s", code, raw)
	}
	// The receiver answers the held attempts while the node cannot record them.
	gate.open()

	proxy.SetCut(false)
	pollUntil(t, 30*time.Second, "/readyz 200 with the database back", func() bool { return status("/readyz") == http.StatusOK })
	const after = 10
	for i := before; i < before+after; i++ {
		if code, raw := p.do("POST", "/api/v1/events", a.APIToken, map[string]any{"id": fmt.Sprintf("evt-%d", i), "type": "x", "data": i}, nil); code != http.StatusCreated {
			t.Fatalf("publish after the outage: %d %s", code, raw)
		}
	}
	defer func() {
		if t.Failed() { // what was not recorded as succeeded, and the node's log
			for _, row := range pgRows(t, dbURL, `SELECT event_id, status, attempts, next_attempt_at, lease_until, last_error FROM outbox_deliveries WHERE status <> 'SUCCEEDED'`) {
				t.Logf("not succeeded: %v", row)
			}
			t.Logf("node's log:\n%s", p.stderr)
		}
	}()
	pollUntil(t, 2*time.Minute, "every delivery recorded as succeeded", func() bool {
		return pgCount(t, dbURL, `SELECT count(*) FROM outbox_deliveries WHERE status = 'SUCCEEDED'`) == before+after
	})
	// The call that ended during the outage is on record as ended once it is back.
	pollUntil(t, time.Minute, "the call's end on record", func() bool {
		return pgCount(t, dbURL, `SELECT count(*) FROM fs_calls WHERE NOT active AND record->>'reason' = 'api-hangup'`) == 1
	})
	mu.Lock()
	defer mu.Unlock()
	for i := range before + after {
		if seen[fmt.Sprintf("evt-%d", i)] == 0 {
			t.Fatalf("evt-%d never arrived", i)
		}
	}
}
