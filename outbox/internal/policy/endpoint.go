package policy

import (
	"fmt"
	"time"

	"github.com/rs/zerolog"

	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
)

// Of resolves an endpoint's policy. Stored endpoints were validated when written, so
// an error here means the store holds something this version does not know: it is
// logged and the standard profile is used rather than stopping deliveries.
func Of(ep outboxdriver.Endpoint, log zerolog.Logger) Policy {
	p, err := Resolve(ep.Profile, ep.Overrides)
	if err != nil {
		log.Error().Err(err).Str("endpoint", ep.ID).Msg("stored policy invalid; using the standard profile")
		p, _ = Profile(outboxdriver.ProfileStandard)
	}
	return p
}

// AttemptTimeout bounds one attempt under p when claims hold a delivery for lease: the
// policy's timeout, and at most half the lease, so that an attempt started on a fresh
// lease ends well before it does.
func (p Policy) AttemptTimeout(lease time.Duration) time.Duration {
	return min(p.Timeout, lease/2)
}

func invalid(field, format string, args ...any) error {
	return &outboxdriver.ValidationError{Field: field, Reason: fmt.Sprintf(format, args...)}
}
