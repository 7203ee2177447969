package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/switchboard-voice/switchboard/outbox/outboxapi"
)

// webhooksTailCommand follows deliveries as they happen, by polling the API: what a
// terminal left open beside a receiver under development wants to see.
func webhooksTailCommand() webhooksCmd {
	var interval time.Duration
	return webhooksCmd{use: "tail [ID...]", args: -1,
		short: "Follow new deliveries and every new attempt live (of every endpoint, or of those named) until interrupted",
		flags: func(cmd *cobra.Command) {
			cmd.Flags().DurationVar(&interval, "interval", time.Second, "how often to ask the node (at least 100ms)")
		},
		run: func(w *webhooksRun, args []string) error {
			if interval < 100*time.Millisecond {
				return usageError("--interval %s: at least 100ms", interval)
			}
			t := &tailer{w: w, fixed: args, known: map[string]*tailed{}, newest: map[string]string{}}
			return t.follow(w.cmd.Context(), interval)
		}}
}

// tailer is one `webhooks tail`: the deliveries it has seen, with the status and
// attempts it last printed of each.
type tailer struct {
	w     *webhooksRun
	fixed []string           // the endpoints named; none: every endpoint, as they come
	known map[string]*tailed // by delivery id
	// newest is, per endpoint, the newest delivery seen: the log lists newest first,
	// so what comes before it on the first page is new.
	newest map[string]string
	// audited is the newest audit entry read: retries and recovers after it send
	// finished deliveries again, which may finish again between two polls.
	audited string
}

type tailed struct {
	endpoint, status string
	attempts         int // the highest attempt number printed (or known at the start); -1 for none
}

// tailPage bounds a page read while following.
const tailPage = 100

// follow reads where every endpoint stands, then polls every interval, printing what
// changed, until ctx ends (exit 0). A node that does not answer is reported and
// asked again; a refused token or a named endpoint that is not there ends it.
func (t *tailer) follow(ctx context.Context, interval time.Duration) error {
	eps, err := t.endpoints(ctx)
	if err != nil {
		return t.fail(err)
	}
	for _, ep := range eps {
		first, _, err := outboxapi.Send(ctx, t.w.api, outboxapi.ListDeliveries(ep, outboxapi.DeliveryFilter{Page: outboxapi.Page{Limit: 1}}))
		if err != nil {
			return t.fail(err)
		}
		if len(first.Data) > 0 {
			t.newest[ep] = first.Data[0].ID
		} else {
			t.newest[ep] = ""
		}
		// Deliveries under way at the start: their next attempts are news too.
		pending, err := t.pending(ctx, ep)
		if err != nil {
			return t.fail(err)
		}
		for _, d := range pending {
			t.known[d.ID] = &tailed{endpoint: ep, status: d.Status, attempts: d.Attempts}
		}
	}
	last, _, err := outboxapi.Send(ctx, t.w.api, outboxapi.ListAudit("", outboxapi.Page{Limit: 1}))
	if err != nil {
		return t.fail(err)
	}
	if len(last.Data) > 0 {
		t.audited = last.Data[0].ID
	}
	fmt.Fprintf(t.w.c.stderr, "following %d endpoint(s) every %s; Ctrl-C stops\n", len(eps), interval)
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		if err := t.poll(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			var p *outboxapi.ProblemError
			if errors.As(err, &p) && (p.Status == http.StatusUnauthorized || p.Status == http.StatusNotFound) {
				return t.fail(err)
			}
			fmt.Fprintf(t.w.c.stderr, "switchboard: %v (asking again)\n", err)
		}
	}
}

func (t *tailer) fail(err error) error { return apiFailure(t.w.c, t.w.f.asJSON, err) }

// endpoints are the ids followed: the named ones (each checked), else every
// endpoint of the account now.
func (t *tailer) endpoints(ctx context.Context) ([]string, error) {
	if len(t.fixed) > 0 {
		for _, id := range t.fixed {
			if _, _, err := outboxapi.Send(ctx, t.w.api, outboxapi.GetWebhook(id)); err != nil {
				return nil, err
			}
		}
		return t.fixed, nil
	}
	var ids []string
	page := outboxapi.Page{Limit: 500}
	for {
		l, _, err := outboxapi.Send(ctx, t.w.api, outboxapi.ListWebhooks(page))
		if err != nil {
			return nil, err
		}
		for _, ep := range l.Data {
			ids = append(ids, ep.ID)
		}
		if l.NextCursor == nil {
			return ids, nil
		}
		page.Cursor = *l.NextCursor
	}
}

// pending lists every PENDING delivery of an endpoint.
func (t *tailer) pending(ctx context.Context, ep string) ([]outboxapi.WebhookDelivery, error) {
	var all []outboxapi.WebhookDelivery
	f := outboxapi.DeliveryFilter{Page: outboxapi.Page{Limit: 500}, Status: "PENDING"}
	for {
		l, _, err := outboxapi.Send(ctx, t.w.api, outboxapi.ListDeliveries(ep, f))
		if err != nil {
			return nil, err
		}
		all = append(all, l.Data...)
		if l.NextCursor == nil {
			return all, nil
		}
		f.Cursor = *l.NextCursor
	}
}

// poll prints the deliveries created since the last poll and the attempts made
// since, oldest first per endpoint.
func (t *tailer) poll(ctx context.Context) error {
	eps, err := t.endpoints(ctx)
	if err != nil {
		return err
	}
	if err := t.pollAudit(ctx, eps); err != nil {
		return err
	}
	for _, ep := range eps {
		if err := t.pollEndpoint(ctx, ep); err != nil {
			return err
		}
	}
	return nil
}

// pollAudit reads the audit entries since the last poll: a delivery retried since,
// and the finished deliveries of an endpoint recovered since, are read again, so that
// a run that began and ended between two polls is printed too.
func (t *tailer) pollAudit(ctx context.Context, eps []string) error {
	var entries []outboxapi.WebhookAuditEntry
	page := outboxapi.Page{Limit: tailPage}
walk:
	for {
		l, _, err := outboxapi.Send(ctx, t.w.api, outboxapi.ListAudit("", page))
		if err != nil {
			return err
		}
		for _, e := range l.Data {
			if e.ID == t.audited {
				break walk
			}
			entries = append(entries, e)
		}
		if l.NextCursor == nil {
			break
		}
		page.Cursor = *l.NextCursor
	}
	if len(entries) == 0 {
		return nil
	}
	t.audited = entries[0].ID
	for _, e := range slices.Backward(entries) {
		if !slices.Contains(eps, e.EndpointID) {
			continue
		}
		var again []string
		switch {
		case e.Action == "delivery.retried" && e.DeliveryID != nil:
			again = []string{*e.DeliveryID}
		case e.Action == "endpoint.recovered":
			for id, k := range t.known {
				if k.endpoint == e.EndpointID && k.status != "PENDING" && k.status != "SUCCEEDED" {
					again = append(again, id)
				}
			}
			slices.Sort(again)
		}
		for _, id := range again {
			d, _, err := outboxapi.Send(ctx, t.w.api, outboxapi.GetDelivery(e.EndpointID, id))
			if err != nil {
				return err
			}
			k := t.known[id]
			if k == nil {
				// Finished before the start: its attempts from the retry on are news.
				k = &tailed{endpoint: e.EndpointID, status: "FAILED", attempts: -1}
				for _, a := range d.Attempts {
					if a.At.Before(e.At) {
						k.attempts = a.Number
					}
				}
				t.known[id] = k
			}
			t.printAttempts(d)
		}
	}
	return nil
}

func (t *tailer) pollEndpoint(ctx context.Context, ep string) error {
	boundary, seenBefore := t.newest[ep] // an endpoint new since the start: all its deliveries are new
	// The new deliveries: the log's first pages down to the newest seen before.
	var fresh []outboxapi.WebhookDelivery
	f := outboxapi.DeliveryFilter{Page: outboxapi.Page{Limit: tailPage}}
walk:
	for {
		l, _, err := outboxapi.Send(ctx, t.w.api, outboxapi.ListDeliveries(ep, f))
		if err != nil {
			return err
		}
		for _, d := range l.Data {
			if seenBefore && d.ID == boundary || t.known[d.ID] != nil {
				break walk
			}
			fresh = append(fresh, d)
		}
		if l.NextCursor == nil {
			break
		}
		f.Cursor = *l.NextCursor
	}
	if len(fresh) > 0 {
		t.newest[ep] = fresh[0].ID
	} else if !seenBefore {
		t.newest[ep] = ""
	}
	observed := map[string]outboxapi.WebhookDelivery{}
	for _, d := range slices.Backward(fresh) {
		t.known[d.ID] = &tailed{endpoint: ep, status: "PENDING", attempts: -1}
		t.printDelivery(d)
		observed[d.ID] = d
	}
	pending, err := t.pending(ctx, ep)
	if err != nil {
		return err
	}
	for _, d := range pending {
		observed[d.ID] = d
		if t.known[d.ID] == nil { // finished before the start, sent again since (a retry, a recover)
			t.known[d.ID] = &tailed{endpoint: ep, status: d.Status, attempts: d.Attempts}
			t.printDelivery(d)
		}
	}
	// What changed: more attempts or another status than printed; a delivery that
	// was PENDING and is no longer listed so has finished.
	var changed []string
	for id, k := range t.known {
		if k.endpoint != ep {
			continue
		}
		d, ok := observed[id]
		switch {
		case ok && (d.Attempts > max(k.attempts, 0) || d.Status != k.status):
			changed = append(changed, id)
		case !ok && k.status == "PENDING":
			changed = append(changed, id)
		}
	}
	slices.Sort(changed) // ids are time-ordered: oldest first
	for _, id := range changed {
		d, _, err := outboxapi.Send(ctx, t.w.api, outboxapi.GetDelivery(ep, id))
		if err != nil {
			return err
		}
		t.printAttempts(d)
	}
	return nil
}

// printDelivery prints a delivery seen for the first time.
func (t *tailer) printDelivery(d outboxapi.WebhookDelivery) {
	if t.w.f.asJSON {
		t.jsonLine(map[string]any{"kind": "delivery", "delivery": d})
		return
	}
	fmt.Fprintf(t.w.c.stdout, "%s  %s  %s  %s  new delivery of event %s  %s\n", stamp(&d.CreatedAt), d.EndpointID, d.ID, d.Type, d.EventID, d.Status)
}

// printAttempts prints d's attempts not printed yet, and its status when it changed.
func (t *tailer) printAttempts(d outboxapi.WebhookDeliveryDetail) {
	k := t.known[d.ID]
	for _, a := range d.Attempts {
		if a.Number <= k.attempts {
			continue
		}
		if t.w.f.asJSON {
			summary := outboxapi.WebhookDelivery{ID: d.ID, EventID: d.EventID, EndpointID: d.EndpointID, Type: d.Type,
				Status: d.Status, Attempts: len(d.Attempts), NextAttemptAt: d.NextAttemptAt, CreatedAt: d.CreatedAt}
			t.jsonLine(map[string]any{"kind": "attempt", "delivery": summary, "attempt": a})
			continue
		}
		status := "-"
		if a.Status != 0 {
			status = strconv.Itoa(a.Status)
		}
		fmt.Fprintf(t.w.c.stdout, "%s  %s  %s  %s  attempt %d  %s %s  %sms  → %s%s\n", stamp(&a.At), d.EndpointID, d.ID, d.Type,
			a.Number, status, a.Outcome, strconv.FormatFloat(a.DurationMs, 'f', 1, 64), d.Status, nextOf(d))
	}
	k.attempts, k.status = max(k.attempts, lastAttempt(d)), d.Status
}

func lastAttempt(d outboxapi.WebhookDeliveryDetail) int {
	if n := len(d.Attempts); n > 0 {
		return d.Attempts[n-1].Number
	}
	return 0
}

// nextOf says when a pending delivery is attempted next.
func nextOf(d outboxapi.WebhookDeliveryDetail) string {
	if d.NextAttemptAt == nil {
		return ""
	}
	return ", next " + stamp(d.NextAttemptAt)
}

func (t *tailer) jsonLine(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // the API's own types always encode
	}
	fmt.Fprintln(t.w.c.stdout, string(b))
}
