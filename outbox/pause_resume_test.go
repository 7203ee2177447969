package outbox_test

import (
	"errors"
	"testing"

	"github.com/switchboard-voice/switchboard/outbox"
)

// Pause and Resume change an endpoint only on the way to their status: a second pause
// or resume records and notifies nothing, and a disabled endpoint refuses both.
func TestPauseAndResumeChangeOnlyOnTheWay(t *testing.T) {
	t.Parallel()
	h := newHarness(t, outbox.ProfileStandard, outbox.Overrides{}, status(204))
	for range 2 {
		if ep, err := h.ob.Pause(h.ctx, "acct", h.ep.ID, outbox.Actor{}); err != nil || ep.Status != outbox.EndpointPaused {
			t.Fatalf("pause: %s, %v", ep.Status, err)
		}
	}
	for range 2 {
		if ep, err := h.ob.Resume(h.ctx, "acct", h.ep.ID, outbox.Actor{}); err != nil || ep.Status != outbox.EndpointActive {
			t.Fatalf("resume: %s, %v", ep.Status, err)
		}
	}
	log, err := h.ob.ListAudit(h.ctx, outbox.AuditQuery{Account: "acct", Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var actions []string
	for _, e := range log {
		actions = append(actions, e.Action)
	}
	if len(actions) != 3 || actions[0] != outbox.AuditResumed || actions[1] != outbox.AuditPaused || actions[2] != outbox.AuditCreated {
		t.Fatalf("audit %v, want one resume, one pause, the creation", actions)
	}
	h.mu.Lock()
	notices := len(h.notices)
	h.mu.Unlock()
	if notices != 1 {
		t.Fatalf("%d notices, want the one of the first pause", notices)
	}

	d := newHarness(t, outbox.ProfileDigize, outbox.Overrides{}, status(500))
	d.publishN(50)
	d.wantEndpoint(outbox.EndpointDisabled, -1)
	if _, err := d.ob.Pause(d.ctx, "acct", d.ep.ID, outbox.Actor{}); !errors.Is(err, outbox.ErrEndpointDisabled) {
		t.Fatalf("pause of a disabled endpoint: %v", err)
	}
	if _, err := d.ob.Resume(d.ctx, "acct", d.ep.ID, outbox.Actor{}); !errors.Is(err, outbox.ErrEndpointDisabled) {
		t.Fatalf("resume of a disabled endpoint: %v", err)
	}
}
