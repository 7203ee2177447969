package callctl

import (
	"errors"
	"fmt"

	"github.com/switchboard-voice/switchboard/retry"
	"github.com/switchboard-voice/switchboard/transport"
)

// AlertType names an alert raised on the account (docs/call-control.md §3, §4, §6).
type AlertType string

// The alerts a call raises.
const (
	// AlertInvalidAppPayload: the application sent something that is not valid
	// (invalid JSON, verbs that fail validation, a bad WebSocket message).
	AlertInvalidAppPayload AlertType = "invalid-app-payload"
	// AlertWebhookFailure: an HTTP hook (or a WebSocket request) failed after its
	// retries ran out.
	AlertWebhookFailure AlertType = "webhook-failure"
	// AlertWebhookConnectionFailure: the WebSocket could not be opened, or a
	// mid-call drop could not be repaired within the reconnect budget.
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

// hookAlertType tells a hook that could not reach the application (no connection, no
// answer in time, refused by egress rules, a name that does not resolve, a bad
// certificate) from one the application answered badly, as jambonz does:
// webhook-connection-failure for the first, webhook-failure for the second.
func hookAlertType(err error) AlertType {
	var he *transport.HookError
	if errors.As(err, &he) {
		switch he.Class {
		case retry.Connect, retry.ResponseTimeout, retry.HandshakeTimeout, retry.EgressRefused, retry.Permanent:
			return AlertWebhookConnectionFailure
		}
	}
	return AlertWebhookFailure
}

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
