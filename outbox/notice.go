package outbox

import "time"

// Notice tells the owner of an endpoint that the outbox paused, disabled or removed
// it (docs/outbox.md §3: owners are notified). The embedding program delivers it (an
// operational webhook, e-mail): Config.Notify receives it once the change is stored.
type Notice struct {
	Account    string
	EndpointID string
	URL        string
	// Action is one of AuditPaused, AuditDisabled, AuditRemoved.
	Action string
	Reason string
	At     time.Time
}
