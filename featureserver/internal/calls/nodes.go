package calls

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore"
)

// ReasonNodeLost starts the recorded reason of a call whose node lost its lease (it
// died, or lost the database for longer than the lease): "node-lost:<node id>",
// recorded by another node sharing the database (docs/outbox.md §5).
const ReasonNodeLost = "node-lost"

// LostReason is the recorded reason of the calls of the lost node with that id.
func LostReason(node string) string { return ReasonNodeLost + ":" + node }

// Lost is the record of call c, whose node node lost its lease, as ended at the time
// at: Interrupted, with LostReason(node).
func Lost(c nodestore.Call, at time.Time, node string) nodestore.Call {
	c = Interrupted(c, at)
	c.Reason = LostReason(node)
	return c
}

// LeaseNode takes or renews this node's lease on its calls (Options.Node) for ttl,
// answering other nodes at url.
func (m *Manager) LeaseNode(ctx context.Context, url string, ttl time.Duration) error {
	return m.store.LeaseNode(ctx, nodestore.LeaseNodeParams{ID: m.opts.Node, URL: url, TTL: ttl})
}

// RecoverLost records as ended the active calls of nodes whose lease expired
// (Lost), and, when restarted, those this node's previous run left active
// (Interrupted: node-restart, as RecoverInterrupted). As RecoverInterrupted, it
// first hands the final status notification of each such call with a recovery to
// Options.Status, then ends the records naming its deliveries: the calls of a lost
// node get theirs from the node that ends them. Several nodes may run it at once;
// each call is ended once (and its final notification, whose event id is the call's
// own, kept once). The read and the ending are two statements: a lease that expires
// between them has its calls ended without a notification, and one renewed between
// them keeps calls that had theirs queued already. It returns how many calls it
// ended.
func (m *Manager) RecoverLost(ctx context.Context, restarted bool) (int, error) {
	now := m.opts.Clock.Now().UTC().Truncate(time.Millisecond) // the API's one precision, as RecoverInterrupted
	p := nodestore.InterruptLostCallsParams{}
	if restarted {
		p.Restarted = m.opts.Node
	}
	return m.recover(ctx, func(c nodestore.Call) nodestore.Call {
		if c.Node == m.opts.Node {
			return Interrupted(c, now)
		}
		return Lost(c, now, c.Node)
	}, func(ctx context.Context) ([]nodestore.Call, error) {
		return m.store.LostCalls(ctx, p)
	}, func(ctx context.Context, end func(nodestore.Call) nodestore.Call) (int, error) {
		return m.store.InterruptLostCalls(ctx, p, end)
	})
}

// ErrNotHere: the call is active on another node, which does not answer for it (its
// lease expired: its calls are about to be recorded as ended).
var ErrNotHere = errors.New("the call's node is not reachable")

// Locate says where an active call of the account runs, for live control sent to a
// node that does not run it: "" when it runs here, the URL of the node that runs it
// otherwise (its lease live). It fails with nodestore.ErrNotFound for no such call,
// ErrCallEnded for a call that ended, and ErrNotHere for a call whose node lost its
// lease.
func (m *Manager) Locate(ctx context.Context, accountSid, callSid string) (string, error) {
	if _, err := m.active(accountSid, callSid); !errors.Is(err, nodestore.ErrNotFound) {
		return "", err
	}
	c, err := m.store.GetCall(ctx, nodestore.GetCallParams{AccountSid: accountSid, CallSid: callSid})
	if err != nil {
		return "", err
	}
	if !c.Active {
		return "", ErrCallEnded
	}
	if c.Node == "" || c.Node == m.opts.Node {
		// Active on record, not here: it is ending (its record is being saved), or
		// a previous run of this node left it (RecoverLost ends it).
		return "", ErrCallEnded
	}
	n, err := m.store.GetNode(ctx, c.Node)
	if errors.Is(err, nodestore.ErrNotFound) || err == nil && !n.Live {
		return "", ErrNotHere
	}
	if err != nil {
		return "", err
	}
	return strings.TrimRight(n.URL, "/"), nil
}
