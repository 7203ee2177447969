package calls

import (
	"context"
	"errors"
	"sort"

	"github.com/switchboard-voice/switchboard/callctl"
	"github.com/switchboard-voice/switchboard/internal/nodestore"
)

// errAPIHangup cancels a call hung up through the API; its text is the recorded
// reason.
var errAPIHangup = errors.New(callctl.ReasonAPIHangup)

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

// List returns the account's calls, active ones first, then finished ones, newest
// first, without timelines, at most limit.
func (m *Manager) List(ctx context.Context, accountSid string, limit int) ([]nodestore.Call, error) {
	out := []nodestore.Call{}
	m.mu.Lock()
	live := make([]*liveCall, 0, len(m.calls))
	for _, lc := range m.calls {
		live = append(live, lc)
	}
	m.mu.Unlock()
	for _, lc := range live {
		if v := lc.snapshot(false); v.AccountSid == accountSid {
			out = append(out, v)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].CreatedAt.After(out[j].CreatedAt) })
	if len(out) >= limit {
		return out[:limit], nil
	}
	records, err := m.store.ListCalls(ctx, nodestore.ListCallsParams{AccountSid: accountSid, Limit: limit - len(out)})
	if err != nil {
		return nil, err
	}
	seen := make(map[string]bool, len(out))
	for _, v := range out {
		seen[v.CallSid] = true
	}
	for _, v := range records {
		if seen[v.CallSid] { // ended between the two reads
			continue
		}
		v.Timeline = nil
		out = append(out, v)
	}
	return out, nil
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

// Redirect points an active call at a new application URL, http(s) or ws(s): its
// verbs replace the call's remaining verbs (callctl.Control.Redirect says how). It
// fails as Hangup does, and with ErrControlBacklog while the call has not applied
// earlier commands.
func (m *Manager) Redirect(accountSid, callSid string, hook nodestore.HookSpec) error {
	return m.send(accountSid, callSid, callctl.Control{Redirect: hook.URL})
}

// Mute mutes or unmutes an active call; it fails as Redirect does.
func (m *Manager) Mute(accountSid, callSid string, mute bool) error {
	return m.send(accountSid, callSid, callctl.Control{Mute: &mute})
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
