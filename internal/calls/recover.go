package calls

import (
	"context"
	"time"

	"github.com/switchboard-voice/switchboard/callctl"
	"github.com/switchboard-voice/switchboard/internal/nodestore"
)

// ReasonNodeRestart is the recorded reason of calls that were active when a previous
// run of the node stopped without draining (a crash, SIGKILL), recorded at the next
// start.
const ReasonNodeRestart = "node-restart"

// RecoverInterrupted records as ended (Interrupted) every call the store holds as
// active: a previous run of the node left them so. Call it at start, before the
// first Start. It returns how many there were, or the store's error, with nothing
// changed.
func (m *Manager) RecoverInterrupted(ctx context.Context) (int, error) {
	now := m.opts.Clock.Now().UTC().Truncate(time.Millisecond)
	return m.store.InterruptActiveCalls(ctx, func(c nodestore.Call) nodestore.Call { return Interrupted(c, now) })
}

// Interrupted is the record of call c, left active by a run of the node that
// stopped without draining, as ended at the time at: with ReasonNodeRestart, as
// completed (SIP 200) when it had been answered, else as failed.
func Interrupted(c nodestore.Call, at time.Time) nodestore.Call {
	c.Active, c.EndedAt, c.Reason = false, &at, ReasonNodeRestart
	if c.CallStatus != string(callctl.StatusInProgress) {
		c.CallStatus = string(callctl.StatusFailed)
	} else {
		c.CallStatus, c.SipStatus = string(callctl.StatusCompleted), 200 // it had been answered
	}
	return c
}
