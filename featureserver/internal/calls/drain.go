package calls

import (
	"errors"
	"time"
)

// ReasonNodeShutdown is the recorded reason of calls still active when the drain
// timeout passed.
const ReasonNodeShutdown = "node-shutdown"

// errShutdown cancels the calls a drain ends; its text is the recorded reason.
var errShutdown = errors.New(ReasonNodeShutdown)

// Active returns the number of active calls.
func (m *Manager) Active() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.calls)
}

// saveGrace is how long a drain, once it ended the calls left, waits for their
// records to be saved while the store fails.
const saveGrace = 15 * time.Second

// Drain stops taking calls, waits for active calls to end up to timeout, then ends
// the rest with ReasonNodeShutdown and waits for them to be recorded (up to saveGrace
// more while the store fails). A timeout of zero or less ends them at once.
func (m *Manager) Drain(timeout time.Duration) {
	m.mu.Lock()
	if !m.draining {
		m.draining = true
		close(m.drained)
	}
	m.mu.Unlock()
	done := make(chan struct{})
	go func() { m.wg.Wait(); close(done) }()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-done:
		return
	case <-t.C:
	}
	m.mu.Lock()
	for _, lc := range m.calls {
		lc.cancel(errShutdown)
	}
	n := len(m.calls)
	m.mu.Unlock()
	m.log.Warn().Int("calls", n).Dur("drain_timeout", timeout).Msg("drain timeout passed: ending active calls")
	// Ended calls whose records the store still refuses get saveGrace more.
	grace := time.NewTimer(saveGrace)
	defer grace.Stop()
	select {
	case <-done:
	case <-grace.C:
		close(m.giveUp)
		<-done
	}
	m.opts.Network.CloseIdleConnections()
}

// Draining returns a channel closed once Drain began: from then on Start refuses
// calls.
func (m *Manager) Draining() <-chan struct{} { return m.drained }

// Ended returns a channel closed once the call's final record is saved: at once for
// a call that is not active here.
func (m *Manager) Ended(callSid string) <-chan struct{} {
	m.mu.Lock()
	lc, ok := m.calls[callSid]
	m.mu.Unlock()
	if ok {
		return lc.done
	}
	done := make(chan struct{})
	close(done)
	return done
}
