package callctl

// AlertType names an alert raised on the account (CALL-CONTROL.md §3, §4, §6).
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
)

// Alert is one alert raised during a call.
type Alert struct {
	Type   AlertType
	Detail string
}
