package calls

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/switchboard-voice/switchboard/callctl"
	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore"
	"github.com/switchboard-voice/switchboard/fragment"
)

// ReasonNodeRestart is the recorded reason of calls that were active when a previous
// run of the node stopped without draining (a crash, SIGKILL), recorded at the next
// start.
const ReasonNodeRestart = "node-restart"

// RecoverInterrupted records as ended (Interrupted) every call the store holds as
// active: a previous run of the node left them so. Call it at start, before the
// first Start. First each such call with a status hook gets its final status
// notification (handed to Options.Status: the outbox), then the records are ended,
// naming the notification's deliveries: a crash in between sends nothing twice (the
// final notification's event id is the call's own, which the outbox keeps once). It
// returns how many calls there were, or the store's error, with no record changed.
func (m *Manager) RecoverInterrupted(ctx context.Context) (int, error) {
	now := m.opts.Clock.Now().UTC().Truncate(time.Millisecond)
	return m.recover(ctx, func(c nodestore.Call) nodestore.Call { return Interrupted(c, now) }, m.store.ActiveCalls, m.store.InterruptActiveCalls)
}

// recover ends the calls read by list (each with its Recovery) through interrupt,
// as ended returns them: first the final status notification of each that has a
// recovery is handed to Options.Status, then the records are ended, naming the
// notifications' deliveries.
func (m *Manager) recover(ctx context.Context, ended func(nodestore.Call) nodestore.Call,
	list func(context.Context) ([]nodestore.Call, error),
	interrupt func(context.Context, func(nodestore.Call) nodestore.Call) (int, error)) (int, error) {
	forget := map[string]bool{}
	if m.opts.Status != nil {
		calls, err := list(ctx)
		if err != nil {
			return 0, err
		}
		for _, c := range calls {
			if err := m.notifyInterrupted(ctx, ended(c), c.Recovery, forget); err != nil {
				return 0, fmt.Errorf("call %s: its final status notification: %w", c.CallSid, err)
			}
		}
	}
	n, err := interrupt(ctx, func(c nodestore.Call) nodestore.Call {
		e := ended(c)
		if m.opts.Status != nil {
			e.StatusDeliveries = append(e.StatusDeliveries, m.opts.Status.Deliveries(c.CallSid)...)
		}
		return e
	})
	if m.opts.Status != nil && err == nil {
		for sid := range forget {
			m.opts.Status.Forget(sid)
		}
	}
	return n, err
}

// notifyInterrupted hands the final status notification of c, ended by Interrupted
// (or Lost), to the status hooks, when its application has a status hook (r, its
// recovery), and marks it in forget: its deliveries are to be forgotten once its
// record names them.
func (m *Manager) notifyInterrupted(ctx context.Context, c nodestore.Call, r *nodestore.CallRecovery, forget map[string]bool) error {
	if r == nil {
		return nil
	}
	log := m.log.With().Str("call_sid", c.CallSid).Logger()
	acct, err := m.store.GetAccount(ctx, c.AccountSid)
	if errors.Is(err, nodestore.ErrNotFound) {
		log.Warn().Msg("the account of a call cut short is gone: no final status notification")
		return nil
	}
	if err != nil {
		return err
	}
	app, err := fragment.Parse(r.AppURL)
	if err != nil {
		log.Warn().Err(err).Msg("a call cut short has an application URL that no longer parses: no final status notification")
		return nil
	}
	target, err := fragment.Resolve(app, r.StatusHook.URL)
	if err != nil {
		log.Warn().Err(err).Msg("a call cut short has a status hook that no longer resolves: no final status notification")
		return nil
	}
	payload := maps.Clone(r.Fields)
	payload["call_status"], payload["sip_status"], payload["sip_reason"] = c.CallStatus, c.SipStatus, sipReasons[c.SipStatus]
	forget[c.CallSid] = true
	return m.opts.Status.Notify(ctx, acct, r.StatusHook, target, payload)
}

// sipReasons are the reason phrases of the SIP statuses Interrupted sets.
var sipReasons = map[int]string{200: "OK", 487: "Request Terminated"}

// Interrupted is the record of call c, left active by a run of the node that
// stopped without draining, as ended at the time at: with ReasonNodeRestart, as
// completed (SIP 200) when it had been answered, else as failed with SIP 487 (a
// canceled INVITE, as callctl ends an unanswered call that is stopped).
func Interrupted(c nodestore.Call, at time.Time) nodestore.Call {
	c.Active, c.EndedAt, c.Reason, c.Recovery = false, &at, ReasonNodeRestart, nil
	if c.CallStatus != string(callctl.StatusInProgress) {
		c.CallStatus, c.SipStatus = string(callctl.StatusFailed), 487
	} else {
		c.CallStatus, c.SipStatus = string(callctl.StatusCompleted), 200 // it had been answered
	}
	return c
}
