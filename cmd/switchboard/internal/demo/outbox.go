package demo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-voice/switchboard/outbox"
	"github.com/switchboard-voice/switchboard/outbox/sqlitestore"
	"github.com/switchboard-voice/switchboard/transport"
	"github.com/switchboard-voice/switchboard/transport/webhooksig"
)

// demoReceiver is the webhook receiver of the outbox demo: it answers 500 to the
// first two requests and 204 afterwards, and checks every request's Standard Webhooks
// signature with the endpoint's secret.
type demoReceiver struct {
	mu       sync.Mutex
	verifier *webhooksig.Verifier
	got      []demoRequest
}

// demoRequest is what the receiver saw of one request.
type demoRequest struct {
	webhookID, timestamp string
	signature            error
}

func (rc *demoReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	rc.mu.Lock()
	seen := demoRequest{webhookID: r.Header.Get("webhook-id"), timestamp: r.Header.Get("webhook-timestamp"),
		signature: errors.New("no secret to check with")}
	if rc.verifier != nil {
		seen.signature = rc.verifier.Verify(r.Header, body)
	}
	rc.got = append(rc.got, seen)
	n := len(rc.got)
	rc.mu.Unlock()
	if n <= 2 {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = io.WriteString(w, `{"error":"database busy"}`)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// request returns what the receiver saw of request n (1-based).
func (rc *demoReceiver) request(n int) (demoRequest, bool) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if n < 1 || n > len(rc.got) {
		return demoRequest{}, false
	}
	return rc.got[n-1], true
}

// demoOutbox is one run of the outbox on the demo's database file: opened, then
// closed and opened again on the same file, as a node that restarts.
type demoOutbox struct {
	w        io.Writer
	path     string
	attempts chan outbox.Attempt
	start    time.Time
	store    *sqlitestore.Store
	ob       *outbox.Outbox
}

func (d *demoOutbox) open(ctx context.Context) error {
	st, err := sqlitestore.Open(ctx, d.path, sqlitestore.Options{})
	if err != nil {
		return err
	}
	egress := transport.PublicOnly()
	egress.AllowLoopback = true // the demo's receiver is on 127.0.0.1
	ob, err := outbox.Open(ctx, outbox.Config{Store: st, Egress: &egress, PollInterval: 50 * time.Millisecond,
		Observe: func(_ outbox.Delivery, a outbox.Attempt) { d.attempts <- a }})
	if err == nil {
		err = ob.Start(ctx)
	}
	if err != nil {
		_ = st.Close()
		return err
	}
	d.store, d.ob = st, ob
	return nil
}

func (d *demoOutbox) close() error {
	if d.ob == nil {
		return nil
	}
	err := errors.Join(d.ob.Close(context.Background()), d.store.Close())
	d.ob, d.store = nil, nil
	return err
}

func (d *demoOutbox) line(kind, format string, args ...any) {
	fmt.Fprintf(d.w, "%9.3fs  %-13s %s\n", time.Since(d.start).Seconds(), kind, fmt.Sprintf(format, args...))
}

// runOutbox publishes one event through the outbox on a SQLite file to a receiver
// that fails twice, restarting the outbox between the attempts, and checks that the
// delivery succeeds on the third attempt with signatures that verify.
func runOutbox(ctx context.Context, w io.Writer) error {
	dir, err := os.MkdirTemp("", "switchboard-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	rc := &demoReceiver{}
	receiverURL, stopReceiver, err := serveLoopback(rc)
	if err != nil {
		return err
	}
	defer stopReceiver()

	const account, schedule = "demo", 0.3
	fmt.Fprintf(w, "\n── Webhook outbox  SQLite %s\n", filepath.Join(dir, "outbox.db"))
	fmt.Fprintf(w, "A call.status event goes to a receiver that answers 500 twice, then 204. The endpoint\n"+
		"retries every %.1f s (its schedule overridden), and the outbox is closed and opened again\n"+
		"on the same file after the first attempt: the delivery is durable and picks up where it was.\n\n", schedule)
	d := &demoOutbox{w: w, path: filepath.Join(dir, "outbox.db"), attempts: make(chan outbox.Attempt, 8), start: time.Now()}
	defer func() { _ = d.close() }()
	if err := d.open(ctx); err != nil {
		return err
	}
	allowHTTP, noJitter := true, 0.0
	ep, err := d.ob.CreateEndpoint(ctx, outbox.EndpointSpec{Account: account, URL: receiverURL + "/hook",
		Events: []string{"call.status"}, Overrides: outbox.Overrides{AllowHTTP: &allowHTTP,
			ScheduleSeconds: []float64{schedule, schedule}, Jitter: &noJitter}})
	if err != nil {
		return err
	}
	verifier, err := webhooksig.NewVerifier(ep.Secrets[0].Key)
	if err != nil {
		return err
	}
	rc.mu.Lock()
	rc.verifier = verifier
	rc.mu.Unlock()
	d.line("endpoint", "%s (profile %s) → %s", ep.ID, ep.Profile, ep.URL)

	pub, err := d.ob.Publish(ctx, outbox.Event{Account: account, Type: "call.status",
		Data: json.RawMessage(`{"callSid":"CA-demo-0001","callStatus":"completed"}`)})
	if err != nil {
		return err
	}
	if len(pub.Deliveries) != 1 {
		return fmt.Errorf("the event made %d deliveries, want 1", len(pub.Deliveries))
	}
	delivery := pub.Deliveries[0].ID
	d.line("publish", "%s stored and synced: delivery %s", pub.Event.ID, delivery)

	for n := 1; n <= 3; n++ {
		var a outbox.Attempt
		select {
		case a = <-d.attempts:
		case <-time.After(10 * time.Second):
			return fmt.Errorf("attempt %d did not come within 10 s", n)
		case <-ctx.Done():
			return ctx.Err()
		}
		seen, ok := rc.request(n)
		check := "signature ✓"
		switch {
		case !ok:
			check = "the receiver saw no request"
		case seen.signature != nil:
			check = "signature ✗ " + seen.signature.Error()
		case seen.webhookID != pub.Event.ID:
			check = fmt.Sprintf("webhook-id %s, want %s", seen.webhookID, pub.Event.ID)
		}
		d.line("attempt", "#%d %d %s in %s; %s, webhook-timestamp %s", a.Number, a.Status, a.Class,
			a.Duration.Round(time.Millisecond/10), check, seen.timestamp)
		if n == 1 {
			if err := d.close(); err != nil {
				return err
			}
			if err := d.open(ctx); err != nil {
				return err
			}
			d.line("restart", "outbox closed and opened again on the same file")
		}
	}
	got, attempts, err := d.ob.GetDelivery(ctx, account, delivery)
	if err != nil {
		return err
	}
	health, err := d.ob.GetEndpoint(ctx, account, ep.ID)
	if err != nil {
		return err
	}
	var problems []string
	if got.Status != outbox.DeliverySucceeded || len(attempts) != 3 {
		problems = append(problems, fmt.Sprintf("delivery %s with %d attempts, want SUCCEEDED with 3", got.Status, len(attempts)))
	}
	for n := 1; n <= 3; n++ {
		if seen, ok := rc.request(n); !ok || seen.signature != nil || seen.webhookID != pub.Event.ID {
			problems = append(problems, fmt.Sprintf("request %d was not signed for %s as it should be", n, pub.Event.ID))
		}
	}
	if health.Failures != 0 || health.LastDeliveryAt == nil {
		problems = append(problems, fmt.Sprintf("endpoint health: %d failures, last delivery %v", health.Failures, health.LastDeliveryAt))
	}
	if len(problems) > 0 {
		fmt.Fprintln(w, "✗ the delivery did not go as expected")
		for _, p := range problems {
			fmt.Fprintf(w, "  ✗ %s\n", p)
		}
		return errors.New(strings.Join(problems, "\n"))
	}
	fmt.Fprintf(w, "✓ delivery %s after 3 attempts, all signed for the same webhook-id; the endpoint's failures are back to 0\n", got.Status)
	return nil
}
