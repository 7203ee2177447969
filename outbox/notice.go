package outbox

import "time"

// Notice tells the owner of an endpoint that it was paused, disabled or removed
// (docs/outbox.md §3: owners are notified), by the outbox itself (Actor ActorSystem)
// or by an operator (Pause, RemoveEndpoint). The embedding program delivers it (an
// operational webhook, e-mail): Config.Notify receives it once the change is stored.
type Notice struct {
	Account    string
	EndpointID string
	URL        string
	// Action is one of AuditPaused, AuditDisabled, AuditRemoved.
	Action string
	// Actor is the audit entry's: ActorSystem, or the operator's Actor.ID.
	Actor  string
	Reason string
	At     time.Time
}
