package callctl

import (
	"errors"
	"fmt"

	"github.com/switchboard-voice/switchboard/transport"
)

// AlertType names an alert raised on the account (docs/call-control.md §3, §4, §6).
type AlertType string

// The alerts a call raises.
const (
	// AlertInvalidAppPayload: the application sent something that is not valid
	// (invalid JSON, verbs that fail validation, a bad WebSocket message).
	AlertInvalidAppPayload AlertType = "invalid-app-payload"
	// AlertWebhookFailure: a WebSocket request failed (no ack in time), or a
	// redirect could not be made. jambonz's HTTP requestor never raises it for a
	// hook (hookAlertType).
	AlertWebhookFailure AlertType = "webhook-failure"
	// AlertWebhookConnectionFailure: an HTTP hook failed after its retries ran out
	// (whatever the failure, an error status included: hookAlertType), the
	// WebSocket could not be opened, or a mid-call drop could not be repaired within
	// the reconnect budget.
	AlertWebhookConnectionFailure AlertType = "webhook-connection-failure"
	// AlertApplication: the application raised an alert itself (the alert verb),
	// with its message as the detail.
	AlertApplication AlertType = "application"
)

// Alert is one alert raised during a call.
type Alert struct {
	Type AlertType
	// URL is the request at fault (a hook, the WebSocket), without its fragment.
	URL    string
	Detail string
}

// hookAlertType is the alert of an HTTP hook that failed: webhook-connection-failure,
// whatever the failure. jambonz's HTTP requestor (lib/utils/http-requestor.js
// request) raises WEBHOOK_STATUS_FAILURE (webhook-failure) only for an error named
// StatusError, which its undici client never throws: an error status is its own
// HTTPResponseError (lib/utils/error.js), named Error, so it too is alerted as
// WEBHOOK_CONNECTION_FAILURE, with the error's message as the detail.
func hookAlertType(error) AlertType { return AlertWebhookConnectionFailure }

// failureDetail is the detail of an alert for a request (what, to url) that failed
// with err. A destination the egress rules refused gets one short line, the URL once:
// what the rules refused and why, and how to allow it (Options.EgressHint), rather
// than the error of every layer that passed the refusal on.
func (c *callRun) failureDetail(what, url string, err error) string {
	var re *transport.RefusedError
	if errors.As(err, &re) {
		d := fmt.Sprintf("%s %s: %v", what, url, re)
		if c.opts.EgressHint != "" {
			d += " (" + c.opts.EgressHint + ")"
		}
		return d
	}
	if !c.quotable() {
		return fmt.Sprintf("%s %s: %s (%s)", what, url, failureClass(err), c.notQuoted())
	}
	return fmt.Sprintf("%s %s: %v", what, url, err)
}
