package outbox

import "github.com/switchboard-voice/switchboard/outbox/outboxdriver"

// ActorSystem is the actor of the outbox's own changes (a 410, the failure
// threshold), and of an operator's change whose Actor names nobody.
const ActorSystem = outboxdriver.ActorSystem

// Actor says who asked for an operator's change, for its audit entry
// (docs/outbox.md §1, audit log): the methods that change an endpoint or send
// deliveries again by hand take one.
type Actor struct {
	// ID names who asked, such as the id of the API token the request carried.
	// Empty is recorded as ActorSystem: the embedding program itself.
	ID string
	// Reason, when not empty, is recorded as the entry's reason; otherwise the
	// method's own (MANUAL for a pause).
	Reason string
}

// stamp sets the actor and, when given, the reason of audit entries made for a.
func (a Actor) stamp(entries []AuditEntry) {
	for i := range entries {
		entries[i].Actor = a.id()
		if a.Reason != "" {
			entries[i].Reason = a.Reason
		}
	}
}

func (a Actor) id() string {
	if a.ID == "" {
		return ActorSystem
	}
	return a.ID
}
