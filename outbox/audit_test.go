package outbox_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/outbox"
)

// TestAuditNamesActorAndReason: every operator's change is audited with who asked
// and why (docs/outbox.md §1, audit log): manual retries with the delivery, recovers
// with how many they queued, pauses, resumes, rotations and removals; the outbox's
// own pause is the system's, with the answer that caused it. Pauses and removals,
// the operator's and the system's, are handed to Config.Notify with their actor.
func TestAuditNamesActorAndReason(t *testing.T) {
	h := newHarness(t, outbox.ProfileStandard, outbox.Overrides{MaxAttempts: ptr(1)}, status(500))
	tok := outbox.Actor{ID: "tok_ops"}
	d := h.publish()
	h.run()
	if got, _ := h.delivery(d.ID); got.Status != outbox.DeliveryFailed {
		t.Fatalf("delivery %s, want FAILED", got.Status)
	}
	if _, err := h.ob.Retry(h.ctx, "acct", d.ID, tok); err != nil {
		t.Fatal(err)
	}
	h.run()
	if n, err := h.ob.Recover(h.ctx, "acct", h.ep.ID, time.Time{}, outbox.Actor{ID: "tok_ops", Reason: "replay after the fix"}); err != nil || n != 1 {
		t.Fatalf("recover: %d %v", n, err)
	}
	if _, err := h.ob.Pause(h.ctx, "acct", h.ep.ID, tok); err != nil {
		t.Fatal(err)
	}
	if _, err := h.ob.Resume(h.ctx, "acct", h.ep.ID, tok); err != nil {
		t.Fatal(err)
	}
	if _, _, err := h.ob.RotateSecret(h.ctx, "acct", h.ep.ID, 0, tok); err != nil {
		t.Fatal(err)
	}
	if err := h.ob.RemoveEndpoint(h.ctx, "acct", h.ep.ID, outbox.Actor{ID: "tok_ops", Reason: "decommissioned"}); err != nil {
		t.Fatal(err)
	}
	// The system's own pause: a 410 on another endpoint.
	gone := h.endpoint(outbox.ProfileStandard, outbox.Overrides{})
	h.recv.setScript(status(http.StatusGone))
	h.run() // the recovered delivery was dropped with its endpoint: nothing else due
	if _, err := h.ob.PublishTo(h.ctx, outbox.Event{Account: "acct", Type: "t", Data: json.RawMessage(`{}`)}, gone.ID); err != nil {
		t.Fatal(err)
	}
	h.run()

	log, err := h.ob.ListAudit(h.ctx, outbox.AuditQuery{Account: "acct", Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	type row struct{ action, endpoint, delivery, actor, reason string }
	want := []row{
		{outbox.AuditPaused, gone.ID, "", outbox.ActorSystem, outbox.ReasonGone},
		{outbox.AuditCreated, gone.ID, "", outbox.ActorSystem, ""},
		{outbox.AuditRemoved, h.ep.ID, "", "tok_ops", "decommissioned"},
		{outbox.AuditRotated, h.ep.ID, "", "tok_ops", ""},
		{outbox.AuditResumed, h.ep.ID, "", "tok_ops", ""},
		{outbox.AuditPaused, h.ep.ID, "", "tok_ops", outbox.ReasonManual},
		{outbox.AuditRecovered, h.ep.ID, "", "tok_ops", "replay after the fix"},
		{outbox.AuditRetried, h.ep.ID, d.ID, "tok_ops", "was FAILED"},
		{outbox.AuditCreated, h.ep.ID, "", outbox.ActorSystem, ""},
	}
	if len(log) != len(want) {
		t.Fatalf("audit log %+v, want %d entries", log, len(want))
	}
	for i, w := range want {
		e := log[i]
		if (row{e.Action, e.EndpointID, e.DeliveryID, e.Actor, e.Reason}) != w {
			t.Errorf("entry %d: %+v, want %+v", i, e, w)
		}
	}
	if log[6].Count != 1 {
		t.Errorf("recover entry counts %d deliveries, want 1", log[6].Count)
	}
	h.mu.Lock()
	notices := append([]outbox.Notice(nil), h.notices...)
	h.mu.Unlock()
	type note struct{ action, endpoint, actor, reason string }
	wantNotes := []note{
		{outbox.AuditPaused, h.ep.ID, "tok_ops", outbox.ReasonManual},
		{outbox.AuditRemoved, h.ep.ID, "tok_ops", "decommissioned"},
		{outbox.AuditPaused, gone.ID, outbox.ActorSystem, outbox.ReasonGone},
	}
	if len(notices) != len(wantNotes) {
		t.Fatalf("notices %+v, want %d", notices, len(wantNotes))
	}
	for i, w := range wantNotes {
		n := notices[i]
		if (note{n.Action, n.EndpointID, n.Actor, n.Reason}) != w || n.Account != "acct" || !strings.HasSuffix(n.URL, "/hook") {
			t.Errorf("notice %d: %+v, want %+v", i, n, w)
		}
	}
	// Paged by the cursor, newest first, every entry once.
	var paged []outbox.AuditEntry
	q := outbox.AuditQuery{Account: "acct", Limit: 4}
	for {
		page, err := h.ob.ListAudit(h.ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		paged = append(paged, page...)
		q.BeforeID = page[len(page)-1].ID
	}
	if len(paged) != len(log) || paged[0].ID != log[0].ID || paged[len(paged)-1].ID != log[len(log)-1].ID {
		t.Fatalf("paged %d entries, want %d", len(paged), len(log))
	}
}

// TestFailedAttemptsLoggedAtWarn: every failed attempt is logged at warn with what an
// operator needs to find it (endpoint, URL, delivery, event, attempt, status, class,
// error, the next attempt); a success logs nothing at warn (docs/outbox.md §7).
func TestFailedAttemptsLoggedAtWarn(t *testing.T) {
	h := newHarness(t, outbox.ProfileStandard, outbox.Overrides{ScheduleSeconds: []float64{1}}, func(n int, _ *http.Request) reply {
		if n == 0 {
			return reply{status: 503, body: "busy"}
		}
		return reply{status: 204}
	})
	d := h.publish()
	h.run()
	var lines []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(h.logs.String()), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil && m["level"] == "warn" {
			lines = append(lines, m)
		}
	}
	if len(lines) != 1 {
		t.Fatalf("warn lines %v, want one for the failed attempt\n%s", lines, h.logs.String())
	}
	l := lines[0]
	for k, v := range map[string]any{"endpoint": h.ep.ID, "url": h.ep.URL, "delivery": d.ID, "event": d.EventID, "type": "call.status",
		"attempt": float64(1), "status": float64(503), "class": "http_5xx", "delivery_status": "PENDING", "account": "acct"} {
		if l[k] != v {
			t.Errorf("%s = %v, want %v (line %v)", k, l[k], v, l)
		}
	}
	if _, ok := l["next_attempt_at"]; !ok {
		t.Errorf("no next_attempt_at in %v", l)
	}
	h.clock.Advance(2 * time.Second)
	h.run()
	if got, _ := h.delivery(d.ID); got.Status != outbox.DeliverySucceeded {
		t.Fatalf("delivery %s", got.Status)
	}
	if n := strings.Count(h.logs.String(), `"level":"warn"`); n != 1 {
		t.Fatalf("%d warn lines after the success, want still 1\n%s", n, h.logs.String())
	}
}
