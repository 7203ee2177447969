package outboxapi

import (
	"errors"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/switchboard-voice/switchboard/outbox"
)

// problem maps an error of the outbox to the problem document of its answer
// (RFC 9457): bad input 422 naming the field, a missing object (another account's
// included) 404, a state that forbids the operation 409, a store that cannot work
// now 503, anything else 500 (logged, its detail hidden).
func (s *server) problem(err error, what string) error {
	var ve *outbox.ValidationError
	switch {
	case errors.As(err, &ve):
		return huma.Error422UnprocessableEntity("invalid "+what, &huma.ErrorDetail{Location: location(ve.Field), Message: ve.Reason})
	case errors.Is(err, outbox.ErrInvalid):
		return huma.Error422UnprocessableEntity("invalid " + what + ": " + err.Error())
	case errors.Is(err, outbox.ErrNotFound):
		return huma.Error404NotFound(what + " not found")
	case errors.Is(err, outbox.ErrConflict):
		return huma.Error409Conflict(strings.TrimPrefix(err.Error(), "outbox: "))
	case errors.Is(err, outbox.ErrEndpointDisabled):
		return huma.Error409Conflict("the endpoint is disabled: it cannot be resumed or paused; create it again")
	case errors.Is(err, outbox.ErrEndpointNotActive):
		return huma.Error409Conflict("the endpoint is not active (paused or disabled): resume it first")
	case errors.Is(err, outbox.ErrDeliveryNotFinished):
		return huma.Error409Conflict("the delivery is still pending: only a finished delivery can be retried")
	case errors.Is(err, outbox.ErrUnavailable), errors.Is(err, outbox.ErrClosed):
		return huma.Error503ServiceUnavailable("the outbox cannot serve this now; try again")
	}
	s.cfg.Logger.Error().Err(err).Msg("outboxapi: request failed")
	return huma.Error500InternalServerError("internal error")
}

// location names, in the request, the field a *outbox.ValidationError names in the
// engine's terms: the endpoint's overrides are the body's policy.
func location(field string) string {
	switch {
	case field == "overrides":
		return "body.policy"
	case strings.HasPrefix(field, "overrides."):
		return "body.policy." + strings.TrimPrefix(field, "overrides.")
	case field == "status":
		return "query.status"
	case field == "grace":
		return "body.graceSeconds"
	case field == "idempotencyKey":
		return "header.Idempotency-Key"
	case field == "secrets":
		return "body.secret"
	}
	return "body." + field
}
