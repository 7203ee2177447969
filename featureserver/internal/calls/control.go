package calls

import (
	"context"
	"errors"
	"maps"

	"github.com/switchboard-voice/switchboard/callctl"
	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore"
)

// errAPIHangup cancels a call hung up through the API; its text is the recorded
// reason, and its adulted legs go on (callctl.ErrAPIHangup).
var errAPIHangup = callctl.ErrAPIHangup

// controlBacklog bounds live-call commands waiting for a call to apply them.
const controlBacklog = 8

// Get returns a call of the account, active or finished: nodestore.ErrNotFound when
// there is none (or it is another account's), or the store's error.
func (m *Manager) Get(ctx context.Context, accountSid, callSid string) (nodestore.Call, error) {
	m.mu.Lock()
	lc, ok := m.calls[callSid]
	m.mu.Unlock()
	if ok {
		v := lc.snapshot(true)
		if v.AccountSid != accountSid {
			return nodestore.Call{}, nodestore.ErrNotFound
		}
		if m.opts.Status != nil && v.Active {
			v.StatusDeliveries = m.opts.Status.Deliveries(callSid)
		}
		return v, nil
	}
	return m.store.GetCall(ctx, nodestore.GetCallParams{AccountSid: accountSid, CallSid: callSid})
}

// List returns the account's calls that p selects (p.AccountSid is the account),
// in the store's order, newest first, without timelines: the records, with the
// state of the calls still active here as it is now. Every call is on record from
// its start, so paging by the store's cursor stays stable.
func (m *Manager) List(ctx context.Context, p nodestore.ListCallsParams) ([]nodestore.Call, error) {
	// The live calls as they are before the read, too: one that ends during the
	// read leaves m.calls only after its final record is saved (end), so a record
	// read active whose call is gone by now would be a stale one; its liveCall still
	// has the final view.
	m.mu.Lock()
	before := maps.Clone(m.calls)
	m.mu.Unlock()
	records, err := m.store.ListCalls(ctx, p)
	if err != nil {
		return nil, err
	}
	live := make([]*liveCall, len(records))
	m.mu.Lock()
	for i, v := range records {
		if v.Active {
			if live[i] = m.calls[v.CallSid]; live[i] == nil { // ended during the read
				live[i] = before[v.CallSid]
			}
		}
	}
	m.mu.Unlock()
	for i, v := range records {
		if live[i] != nil {
			v = live[i].snapshot(false)
		}
		v.Timeline = nil
		records[i] = v
	}
	return records, nil
}

// Delete removes a call of the account: an active call is hung up first (as Hangup
// does) and its record removed once it ended, or when ctx ends (then the error is
// ctx's and the call, hung up, keeps its record). nodestore.ErrNotFound when there
// is no such call.
func (m *Manager) Delete(ctx context.Context, accountSid, callSid string) error {
	m.mu.Lock()
	lc, ok := m.calls[callSid]
	m.mu.Unlock()
	if ok && lc.snapshot(false).AccountSid == accountSid {
		lc.cancel(errAPIHangup) // a no-op on a call already ending
		select {
		case <-lc.done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return m.store.DeleteCall(ctx, nodestore.GetCallParams{AccountSid: accountSid, CallSid: callSid})
}

// Hangup ends an active call of the account at once, even while it waits for a hook
// or an ack: the call is canceled with the cause api-hangup, its recorded reason. It
// fails with nodestore.ErrNotFound for a call not active here and ErrCallEnded for
// one that is ending.
func (m *Manager) Hangup(accountSid, callSid string) error {
	lc, err := m.active(accountSid, callSid)
	if err != nil {
		return err
	}
	lc.cancel(errAPIHangup)
	return nil
}

// ErrCallAnswered: call_status no-answer for a call that was answered.
var ErrCallAnswered = errors.New("call was answered")

// NoAnswer cancels an active call of the account that is not answered yet: it ends
// with status no-answer (callctl.ErrNoAnswer). It fails as Hangup does, and with
// ErrCallAnswered once the call is answered (then nothing changes: hang it up).
func (m *Manager) NoAnswer(accountSid, callSid string) error {
	lc, err := m.active(accountSid, callSid)
	if err != nil {
		return err
	}
	if v := lc.snapshot(false); callctl.Status(v.CallStatus) == callctl.StatusInProgress {
		return ErrCallAnswered
	}
	lc.cancel(callctl.ErrNoAnswer)
	return nil
}

// Redirect points an active call at a new application URL, http(s) or ws(s): its
// verbs replace the call's remaining verbs (callctl.Control.Redirect says how). It
// fails as Hangup does, and with ErrControlBacklog while the call has not applied
// earlier commands.
//
// A statusHook, when set, receives the call's status notifications once the
// redirect took effect (through the node's outbox when it has one); its URL
// resolves against the new application's.
func (m *Manager) Redirect(accountSid, callSid string, hook nodestore.HookSpec, statusHook *nodestore.HookSpec) error {
	ctl := callctl.Control{Redirect: hook.URL}
	if statusHook != nil {
		h := statusHook
		ctl.StatusHook = &callctl.StatusHook{URL: h.URL, Method: h.Method, Username: h.Username, Password: h.Password}
		if m.opts.Status != nil {
			ctx, cancel := m.forWrite(context.Background())
			acct, err := m.store.GetAccount(ctx, accountSid)
			cancel()
			if err == nil {
				ctl.StatusHook.Notifier = m.opts.Status.ForCall(acct, *h)
			}
		}
	}
	return m.send(accountSid, callSid, ctl)
}

// ChildRedirect moves the dialed leg of an active call's dial in progress to the
// application at url (callctl.Control.ChildCallHook); it fails as Redirect does.
func (m *Manager) ChildRedirect(accountSid, callSid, url string) error {
	return m.send(accountSid, callSid, callctl.Control{ChildCallHook: url})
}

// Mute mutes or unmutes an active call; it fails as Redirect does.
func (m *Manager) Mute(accountSid, callSid string, mute bool) error {
	return m.send(accountSid, callSid, callctl.Control{Mute: &mute})
}

// Update sends a live call control update acting on media (whisper, listen_status
// ...: callctl.Control.Update). It fails as Mute does.
func (m *Manager) Update(accountSid, callSid, update string) error {
	return m.send(accountSid, callSid, callctl.Control{Update: update})
}

// active returns an active call of the account.
func (m *Manager) active(accountSid, callSid string) (*liveCall, error) {
	m.mu.Lock()
	lc, ok := m.calls[callSid]
	m.mu.Unlock()
	if !ok || lc.snapshot(false).AccountSid != accountSid {
		return nil, nodestore.ErrNotFound
	}
	if !lc.snapshot(false).Active {
		return nil, ErrCallEnded
	}
	return lc, nil
}

// send hands a live-call command to an active call of the account.
func (m *Manager) send(accountSid, callSid string, ctl callctl.Control) error {
	lc, err := m.active(accountSid, callSid)
	if err != nil {
		return err
	}
	select {
	case lc.control <- ctl:
		return nil
	default:
		return ErrControlBacklog
	}
}
