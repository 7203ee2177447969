package outbox_test

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/outbox"
	"github.com/switchboard-voice/switchboard/outbox/sqlitestore"
	"github.com/switchboard-voice/switchboard/transport"
)

// TestPublishTx: an event published inside the caller's transaction is sent only when
// that transaction commits; a rollback leaves neither the caller's row nor the event.
func TestPublishTx(t *testing.T) {
	t.Parallel()
	h := newHarness(t, outbox.ProfileStandard, outbox.Overrides{}, status(204))
	db := h.store.DB()
	if _, err := db.ExecContext(h.ctx, `CREATE TABLE orders (id TEXT PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	// publishIn inserts order and publishes its event in a transaction it leaves open.
	publishIn := func(order string) (*sql.Tx, string) {
		tx, err := db.BeginTx(h.ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.ExecContext(h.ctx, `INSERT INTO orders (id) VALUES (?)`, order); err != nil {
			t.Fatal(err)
		}
		pub, err := h.ob.PublishTx(h.ctx, tx, outbox.Event{Account: "acct", Type: "order.created",
			Data: json.RawMessage(`{"order":"` + order + `"}`)})
		if err != nil {
			t.Fatal(err)
		}
		return tx, pub.Event.ID
	}

	tx, rolledBack := publishIn("o-1")
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if n := h.run(); n != 0 {
		t.Fatalf("%d deliveries attempted after a rollback", n)
	}
	if _, err := h.ob.GetEvent(h.ctx, "acct", rolledBack); !errors.Is(err, outbox.ErrNotFound) {
		t.Fatalf("rolled-back event: %v", err)
	}
	tx, committed := publishIn("o-2")
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if n := h.run(); n != 1 {
		t.Fatalf("%d deliveries attempted after a commit, want 1", n)
	}
	reqs := h.recv.requests()
	if len(reqs) != 1 || reqs[0].header.Get("webhook-id") != committed || !strings.Contains(string(reqs[0].body), "o-2") {
		t.Fatalf("receiver got %d requests", len(reqs))
	}
	if _, err := h.ob.PublishTx(h.ctx, nil, outbox.Event{Account: "acct", Type: "x"}); !errors.Is(err, outbox.ErrInvalid) {
		t.Fatalf("nil tx: %v", err)
	}
}

// TestPublishValidationAndIdempotency: bad events are refused with the field named and
// store nothing; a repeated id returns the stored event and sends nothing again.
func TestPublishValidationAndIdempotency(t *testing.T) {
	t.Parallel()
	h := newHarness(t, outbox.ProfileStandard, outbox.Overrides{}, status(204))
	checkRefused(t, func(ev outbox.Event) error { _, err := h.ob.Publish(h.ctx, ev); return err }, []refusedInput[outbox.Event]{
		{"account", outbox.Event{Type: "x"}},
		{"type", outbox.Event{Account: "acct"}},
		{"type", outbox.Event{Account: "acct", Type: "has space"}},
		{"id", outbox.Event{Account: "acct", Type: "x", ID: "a.b"}},
		{"id", outbox.Event{Account: "acct", Type: "x", ID: strings.Repeat("a", 129)}},
		{"data", outbox.Event{Account: "acct", Type: "x", Data: json.RawMessage(`{"a":`)}},
	})
	if evs, _ := h.ob.ListEvents(h.ctx, outbox.EventQuery{Account: "acct"}); len(evs) != 0 {
		t.Fatalf("bad input stored %d events", len(evs))
	}
	ev := outbox.Event{ID: "evt-42", Account: "acct", Type: "call.status", Data: json.RawMessage(`{"a":1}`)}
	first, err := h.ob.Publish(h.ctx, ev)
	if err != nil || first.Duplicate {
		t.Fatal(err)
	}
	again, err := h.ob.Publish(h.ctx, ev)
	if err != nil || !again.Duplicate || len(again.Deliveries) != 1 || again.Deliveries[0].ID != first.Deliveries[0].ID {
		t.Fatalf("republish: %+v %v", again, err)
	}
	// The same JSON spaced otherwise is the same content; a createdAt is content when
	// the publisher gives it (without one, a republish is stamped anew and still a
	// duplicate, above).
	spaced := ev
	spaced.Data = json.RawMessage(" { \"a\" : 1 }\n")
	if again, err := h.ob.Publish(h.ctx, spaced); err != nil || !again.Duplicate {
		t.Fatalf("same JSON, other spacing: %+v %v", again, err)
	}
	stamped := ev
	stamped.CreatedAt = first.Event.CreatedAt.Add(time.Hour)
	if _, err := h.ob.Publish(h.ctx, stamped); !errors.Is(err, outbox.ErrConflict) {
		t.Fatalf("same id, other createdAt: %v", err)
	}
	stamped.CreatedAt = first.Event.CreatedAt
	if again, err := h.ob.Publish(h.ctx, stamped); err != nil || !again.Duplicate {
		t.Fatalf("same id, same createdAt given: %+v %v", again, err)
	}
	ev.Data = json.RawMessage(`{"a":2}`)
	if _, err := h.ob.Publish(h.ctx, ev); !errors.Is(err, outbox.ErrConflict) {
		t.Fatalf("same id, other data: %v", err)
	}
	// Ids are unique per account: another account's publish of the same id is its
	// own event, neither a conflict nor a duplicate (docs/outbox.md §1).
	if pub, err := h.ob.Publish(h.ctx, outbox.Event{ID: "evt-42", Account: "other", Type: "call.status", Data: ev.Data}); err != nil || pub.Duplicate {
		t.Fatalf("same id, other account: %+v %v", pub, err)
	}
	h.run()
	if n := len(h.recv.requests()); n != 1 {
		t.Fatalf("receiver got %d requests, want 1", n)
	}
	// Another account sees its own event under that id, never this one.
	if got, err := h.ob.GetEvent(h.ctx, "other", "evt-42"); err != nil || got.Account != "other" || string(got.Data) == string(first.Event.Data) {
		t.Fatalf("other account reads %+v %v, want its own event", got, err)
	}
	if _, _, err := h.ob.GetDelivery(h.ctx, "other", first.Deliveries[0].ID); !errors.Is(err, outbox.ErrNotFound) {
		t.Fatalf("other account reads the delivery: %v", err)
	}
}

// TestFilterAndPing: deliveries go only to endpoints whose filter takes the type; a
// ping reaches one endpoint whatever its filter.
func TestFilterAndPing(t *testing.T) {
	t.Parallel()
	h := newHarness(t, outbox.ProfileStandard, outbox.Overrides{}, status(204))
	if _, err := h.ob.UpdateEndpoint(h.ctx, "acct", h.ep.ID, outbox.EndpointUpdate{Events: &[]string{"call.ended"}}); err != nil {
		t.Fatal(err)
	}
	pub, err := h.ob.Publish(h.ctx, outbox.Event{Account: "acct", Type: "call.status"})
	if err != nil || len(pub.Deliveries) != 0 {
		t.Fatalf("filtered publish: %+v %v", pub, err)
	}
	d, err := h.ob.Ping(h.ctx, "acct", h.ep.ID)
	if err != nil || d.EventType != outbox.PingEventType {
		t.Fatalf("ping: %+v %v", d, err)
	}
	h.run()
	if got, _ := h.delivery(d.ID); got.Status != outbox.DeliverySucceeded {
		t.Fatalf("ping delivery %s", got.Status)
	}
	if _, err := h.ob.Ping(h.ctx, "other", h.ep.ID); !errors.Is(err, outbox.ErrNotFound) {
		t.Fatalf("ping across accounts: %v", err)
	}
}

// TestResponseStorage: a JSON response is kept up to 64 KiB; one that is not JSON is
// cut to its first 1,000 characters.
func TestResponseStorage(t *testing.T) {
	t.Parallel()
	big := `{"pad":"` + strings.Repeat("x", 70<<10) + `"}`
	text := strings.Repeat("é", 1500)
	cases := []struct {
		name, body, ctype string
		want              func(string) bool
	}{
		{"json kept whole", `{"ok":true}`, "application/json", func(s string) bool { return s == `{"ok":true}` }},
		{"json capped at 64 KiB", big, "application/json", func(s string) bool { return len(s) == 64<<10 }},
		{"text cut to 1,000 characters", text, "text/plain", func(s string) bool { return s == strings.Repeat("é", 1000) }},
		{"large text cut to 1,000 characters", strings.Repeat("y", 70<<10), "text/plain", func(s string) bool { return len(s) == 1000 }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, outbox.ProfileStandard, outbox.Overrides{}, func(int, *http.Request) reply {
				return reply{status: 200, body: c.body, headers: map[string]string{"Content-Type": c.ctype}}
			})
			d := h.publish()
			h.run()
			_, as := h.delivery(d.ID)
			if !c.want(as[0].Response) {
				t.Fatalf("stored %d bytes", len(as[0].Response))
			}
		})
	}
}

// TestRetentionPurge: rows older than the window go, in bounded batches; newer stay.
func TestRetentionPurge(t *testing.T) {
	t.Parallel()
	h := newHarness(t, outbox.ProfileStandard, outbox.Overrides{}, status(204))
	ob := h.another(outbox.Config{HTTPClient: loopbackClient(h.recv), PurgeBatch: 3})
	var old []outbox.Delivery
	for range 7 {
		old = append(old, h.publish())
	}
	h.run()
	h.clock.Advance(8 * 24 * time.Hour)
	recent := h.publish()
	deliveries, events, err := ob.Purge(h.ctx)
	if err != nil || deliveries != 7 || events != 7 {
		t.Fatalf("purged %d deliveries, %d events, %v", deliveries, events, err)
	}
	if _, _, err := h.ob.GetDelivery(h.ctx, "acct", old[0].ID); !errors.Is(err, outbox.ErrNotFound) {
		t.Fatalf("old delivery: %v", err)
	}
	if _, _, err := h.ob.GetDelivery(h.ctx, "acct", recent.ID); err != nil {
		t.Fatalf("recent delivery purged: %v", err)
	}
}

// TestEndpointValidation: bad endpoints and overrides are refused with the field named.
func TestEndpointValidation(t *testing.T) {
	t.Parallel()
	h := newHarness(t, outbox.ProfileStandard, outbox.Overrides{}, status(204))
	checkRefused(t, func(spec outbox.EndpointSpec) error { _, err := h.ob.CreateEndpoint(h.ctx, spec); return err }, []refusedInput[outbox.EndpointSpec]{
		{"account", outbox.EndpointSpec{URL: "https://example.com"}},
		{"url", outbox.EndpointSpec{Account: "a", URL: "ftp://example.com"}},
		{"url", outbox.EndpointSpec{Account: "a", URL: "not a url"}},
		{"url", outbox.EndpointSpec{Account: "a", URL: "https://user:pw@example.com"}},
		{"url", outbox.EndpointSpec{Account: "a", URL: "https://example.com:99999/hook"}},
		{"url", outbox.EndpointSpec{Account: "a", URL: "https://:443/hook"}},
		{"profile", outbox.EndpointSpec{Account: "a", URL: "https://example.com", Profile: "acme"}},
		{"secrets", outbox.EndpointSpec{Account: "a", URL: "https://example.com", Secrets: []string{"hunter2"}}},
		{"overrides.maxAttempts", outbox.EndpointSpec{Account: "a", URL: "https://example.com", Overrides: outbox.Overrides{MaxAttempts: ptr(0)}}},
		{"overrides.timeoutSeconds", outbox.EndpointSpec{Account: "a", URL: "https://example.com", Overrides: outbox.Overrides{TimeoutSeconds: ptr(600.0)}}},
		{"overrides.scheduleSeconds", outbox.EndpointSpec{Account: "a", URL: "https://example.com", Overrides: outbox.Overrides{ScheduleSeconds: []float64{-1}}}},
		{"overrides.onGone", outbox.EndpointSpec{Account: "a", URL: "https://example.com", Overrides: outbox.Overrides{OnGone: ptr(outbox.GoneAction("explode"))}}},
		{"overrides.deliveryHeader", outbox.EndpointSpec{Account: "a", URL: "https://example.com", Overrides: outbox.Overrides{DeliveryHeader: ptr("bad header\n")}}},
		{"overrides.deliveryHeader", outbox.EndpointSpec{Account: "a", URL: "https://example.com", Overrides: outbox.Overrides{DeliveryHeader: ptr("Webhook-Signature")}}},
		{"overrides.scheduleSeconds", outbox.EndpointSpec{Account: "a", URL: "https://example.com", Overrides: outbox.Overrides{ScheduleSeconds: make([]float64, 100)}}},
	})
	// An http URL under an https-only profile says what allows it, as the policy
	// spells it ("override allowHttp" left a reader looking for a flag of that name).
	if _, err := h.ob.CreateEndpoint(h.ctx, outbox.EndpointSpec{Account: "a", URL: "http://example.com/hook"}); !errors.Is(err, outbox.ErrInvalid) ||
		!strings.Contains(err.Error(), `the standard profile allows https only: the policy override {"allowHttp": true} permits http`) {
		t.Fatalf("http under standard: %v", err)
	}
	if eps, _ := h.ob.ListEndpoints(h.ctx, "a"); len(eps) != 0 {
		t.Fatalf("bad input stored %d endpoints", len(eps))
	}
	if _, _, err := h.ob.RotateSecret(h.ctx, "acct", h.ep.ID, -time.Hour, outbox.Actor{}); !errors.Is(err, outbox.ErrInvalid) {
		t.Fatalf("rotation with a negative grace: %v", err)
	}
	if ep, _ := h.ob.GetEndpoint(h.ctx, "acct", h.ep.ID); len(ep.Secrets) != len(h.ep.Secrets) {
		t.Fatalf("a refused rotation changed the secrets: %d, was %d", len(ep.Secrets), len(h.ep.Secrets))
	}
	if _, err := h.ob.ListDeliveries(h.ctx, outbox.DeliveryQuery{Account: "acct", Status: "BOGUS"}); !errors.Is(err, outbox.ErrInvalid) {
		t.Fatalf("listing by an unknown status: %v", err)
	}
	// A bad update changes nothing.
	if _, err := h.ob.UpdateEndpoint(h.ctx, "acct", h.ep.ID, outbox.EndpointUpdate{URL: ptr("gopher://x")}); !errors.Is(err, outbox.ErrInvalid) {
		t.Fatalf("bad update: %v", err)
	}
	if ep := h.endpointNow(); ep.URL != h.ep.URL {
		t.Fatalf("bad update changed the URL to %s", ep.URL)
	}
	if _, err := outbox.Open(h.ctx, outbox.Config{}); !errors.Is(err, outbox.ErrInvalid) {
		t.Fatalf("Open without a store: %v", err)
	}
	if _, err := outbox.Open(h.ctx, outbox.Config{Store: h.store, LeaseDuration: time.Second}); !errors.Is(err, outbox.ErrInvalid) {
		t.Fatalf("Open with a 1 s lease: %v", err)
	}
}

// A caller's own transaction holds SQLite's one write lock. A publish outside it
// then waits for the lock no longer than its context allows, and a store that gives
// up (its busy timeout) fails with ErrUnavailable: nothing is stored either way.
func TestLockedStoreHonoursContextAndSaysUnavailable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "locked.db")
	// Two outboxes on the file: one whose store gives up after 300 ms, one whose store
	// would wait a minute, far longer than the context it is given.
	st, err := sqlitestore.Open(ctx, path, sqlitestore.Options{BusyTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ob, err := outbox.Open(ctx, outbox.Config{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	patientStore, err := sqlitestore.Open(ctx, path, sqlitestore.Options{BusyTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { patientStore.Close() })
	patient, err := outbox.Open(ctx, outbox.Config{Store: patientStore})
	if err != nil {
		t.Fatal(err)
	}
	tx, err := st.DB().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(`CREATE TABLE app_orders (id INTEGER)`); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := patient.Publish(short, outbox.Event{Account: "a", Type: "t"}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("publish with a short deadline: %v, want context.DeadlineExceeded", err)
	}
	if _, err := ob.Publish(ctx, outbox.Event{Account: "a", Type: "t"}); !errors.Is(err, outbox.ErrUnavailable) {
		t.Fatalf("publish past the busy timeout: %v, want ErrUnavailable", err)
	}
	if _, err := ob.CreateEndpoint(ctx, outbox.EndpointSpec{Account: "a", URL: "https://example.com/"}); !errors.Is(err, outbox.ErrUnavailable) {
		t.Fatalf("endpoint past the busy timeout: %v, want ErrUnavailable", err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if evs, err := ob.ListEvents(ctx, outbox.EventQuery{Account: "a"}); err != nil || len(evs) != 0 {
		t.Fatalf("events after the failed publishes: %d, %v", len(evs), err)
	}
}

// refusedInput is an input that a call must refuse as invalid, naming field.
type refusedInput[In any] struct {
	field string
	in    In
}

// checkRefused fails unless call refuses every input of bad with a *ValidationError
// that names its field and wraps ErrInvalid.
func checkRefused[In any](t *testing.T, call func(In) error, bad []refusedInput[In]) {
	t.Helper()
	for _, b := range bad {
		err := call(b.in)
		var ve *outbox.ValidationError
		if !errors.As(err, &ve) || ve.Field != b.field || !errors.Is(err, outbox.ErrInvalid) {
			t.Fatalf("%+v: %v, want a validation error on %s", b.in, err, b.field)
		}
	}
}

// TestReadBack: Config.ReadBack decides, by the destinations an attempt reached,
// whether the delivery log keeps what they answered: a withheld answer keeps its
// status and class but no body, and a failure no error text, which can quote the
// answer (a destination that does not speak HTTP); a connection whose destination
// cannot be told (a client not of package transport) is withheld too.
func TestReadBack(t *testing.T) {
	t.Parallel()
	const secret = `{"db_password":"hunter2"}`
	h := newHarness(t, outbox.ProfileStandard, outbox.Overrides{}, func(int, *http.Request) reply {
		return reply{status: 200, body: secret, headers: map[string]string{"Content-Type": "application/json"}}
	})
	var mu sync.Mutex
	var asked []transport.Peer
	readBack := func(keep bool) func(outbox.Endpoint, transport.Peer) bool {
		return func(_ outbox.Endpoint, p transport.Peer) bool {
			mu.Lock()
			asked = append(asked, p)
			mu.Unlock()
			return keep
		}
	}
	attempt := func(ob *outbox.Outbox) outbox.Attempt {
		t.Helper()
		d := h.publish()
		h.runOn(ob)
		_, as := h.delivery(d.ID)
		return as[len(as)-1]
	}
	if a := attempt(h.another(outbox.Config{HTTPClient: loopbackClient(h.recv), ReadBack: readBack(true)})); a.Response != secret {
		t.Fatalf("kept: stored %q", a.Response)
	}
	loopback := transport.Peer{Host: "127.0.0.1", Addr: netip.MustParseAddr("127.0.0.1")}
	mu.Lock()
	first := append([]transport.Peer(nil), asked...)
	mu.Unlock()
	if len(first) == 0 || first[0] != loopback {
		t.Fatalf("ReadBack was asked about %v, want %v", first, loopback)
	}
	if a := attempt(h.another(outbox.Config{HTTPClient: loopbackClient(h.recv), ReadBack: readBack(false)})); a.Response != "" ||
		a.Status != 200 || a.Class != outbox.ClassSuccess {
		t.Fatalf("withheld: %+v", a)
	}
	if a := attempt(h.another(outbox.Config{HTTPClient: h.recv.srv.Client(), ReadBack: readBack(true)})); a.Response != "" || a.Status != 200 {
		t.Fatalf("a connection of another client: %+v", a)
	}

	// A destination that answers with something else than HTTP: Go's client quotes
	// it in its error. It answers once it has read the request's first line, as a
	// line-based service answers what it was sent: a banner written before the
	// request reaches an idle connection, which Go's client drops as unsolicited
	// without quoting it.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if _, err := bufio.NewReader(c).ReadString('\n'); err == nil {
				_, _ = io.WriteString(c, "-ERR db_password hunter2\r\n")
			}
			_ = c.Close()
		}
	}()
	banner := func(keep func(outbox.Endpoint, transport.Peer) bool) outbox.Attempt {
		t.Helper()
		ob := h.another(outbox.Config{HTTPClient: loopbackClient(h.recv), ReadBack: keep})
		ep, err := ob.CreateEndpoint(h.ctx, outbox.EndpointSpec{Account: "acct", URL: "http://" + ln.Addr().String() + "/", Profile: outbox.ProfileStandard,
			Overrides: outbox.Overrides{AllowHTTP: ptr(true)}})
		if err != nil {
			t.Fatal(err)
		}
		pub, err := ob.PublishTo(h.ctx, outbox.Event{Account: "acct", Type: "call.status", Data: json.RawMessage(`{}`)}, ep.ID)
		if err != nil || len(pub.Deliveries) != 1 {
			t.Fatalf("publish: %+v %v", pub, err)
		}
		h.runOn(ob)
		_, as := h.delivery(pub.Deliveries[0].ID)
		return as[len(as)-1]
	}
	if a := banner(nil); !strings.Contains(a.Error, "db_password") {
		t.Fatalf("without ReadBack the error is kept whole, got %q", a.Error)
	}
	if a := banner(readBack(false)); strings.Contains(a.Error, "db_password") || a.Class != outbox.ClassNetwork {
		t.Fatalf("withheld: class %s, error %q", a.Class, a.Error)
	}
}
