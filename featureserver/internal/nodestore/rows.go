package nodestore

import (
	"encoding/json"
	"time"
)

// Account is a tenant of the node.
type Account struct {
	Sid           string    `json:"account_sid"`
	Name          string    `json:"name"`
	WebhookSecret string    `json:"-"`
	CreatedAt     time.Time `json:"created_at"`
	// PreviousWebhookSecret is the secret a rotation replaced: it keeps signing the
	// account's hooks, beside WebhookSecret, until PreviousSecretUntil, so that
	// receivers can move to the new one (as Standard Webhooks rotation does).
	// Empty: none.
	PreviousWebhookSecret string    `json:"-"`
	PreviousSecretUntil   time.Time `json:"-"`
}

// SigningSecrets are the secrets that sign the account's hooks at now: the current
// one, then the previous one while its grace period lasts.
func (a Account) SigningSecrets(now time.Time) []string {
	if a.PreviousWebhookSecret != "" && now.Before(a.PreviousSecretUntil) {
		return []string{a.WebhookSecret, a.PreviousWebhookSecret}
	}
	return []string{a.WebhookSecret}
}

// HookSpec is a stored hook: URL (fragment allowed), method and Basic credentials.
type HookSpec struct {
	URL      string `json:"url"`
	Method   string `json:"method,omitempty" enum:"GET,POST" doc:"POST (default) or GET"`
	Username string `json:"username,omitempty"`
	Password string `json:"password,omitempty"`
}

// Application binds a call hook and a status hook to an account.
type Application struct {
	Sid            string    `json:"application_sid"`
	AccountSid     string    `json:"account_sid"`
	Name           string    `json:"name"`
	CallHook       HookSpec  `json:"call_hook"`
	CallStatusHook *HookSpec `json:"call_status_hook,omitempty"`
	CreatedAt      time.Time `json:"created_at"`
	ApplicationSettings
}

// ApplicationSettings are an application's speech settings and env_vars, named as
// jambonz's applications table names them: what its calls' hooks carry as defaults
// and env_vars (docs/compatibility.md §5). Empty speech settings take jambonz's
// defaults when a call runs.
type ApplicationSettings struct {
	SpeechSynthesisVendor            string         `json:"speech_synthesis_vendor,omitempty"`
	SpeechSynthesisLanguage          string         `json:"speech_synthesis_language,omitempty"`
	SpeechSynthesisVoice             string         `json:"speech_synthesis_voice,omitempty"`
	SpeechSynthesisLabel             string         `json:"speech_synthesis_label,omitempty"`
	SpeechRecognizerVendor           string         `json:"speech_recognizer_vendor,omitempty"`
	SpeechRecognizerLanguage         string         `json:"speech_recognizer_language,omitempty"`
	SpeechRecognizerLabel            string         `json:"speech_recognizer_label,omitempty"`
	FallbackSpeechSynthesisVendor    string         `json:"fallback_speech_synthesis_vendor,omitempty"`
	FallbackSpeechSynthesisLanguage  string         `json:"fallback_speech_synthesis_language,omitempty"`
	FallbackSpeechSynthesisVoice     string         `json:"fallback_speech_synthesis_voice,omitempty"`
	FallbackSpeechSynthesisLabel     string         `json:"fallback_speech_synthesis_label,omitempty"`
	FallbackSpeechRecognizerVendor   string         `json:"fallback_speech_recognizer_vendor,omitempty"`
	FallbackSpeechRecognizerLanguage string         `json:"fallback_speech_recognizer_language,omitempty"`
	FallbackSpeechRecognizerLabel    string         `json:"fallback_speech_recognizer_label,omitempty"`
	EnvVars                          map[string]any `json:"env_vars,omitempty"`
}

// Alert is something an account's operator should know about a call.
type Alert struct {
	Type       string    `json:"type"`
	CallSid    string    `json:"call_sid"`
	URL        string    `json:"url"`
	Detail     string    `json:"detail"`
	Time       time.Time `json:"time"`
	AccountSid string    `json:"-"`
}

// Message is an SMS message an account sent through the REST API's Messages route
// (simulated: recorded, never delivered).
type Message struct {
	MessageSid string    `json:"message_sid"`
	AccountSid string    `json:"account_sid"`
	From       string    `json:"from"`
	To         string    `json:"to"`
	Text       string    `json:"text,omitempty"`
	Media      string    `json:"media,omitempty"`
	Status     string    `json:"message_status"`
	CreatedAt  time.Time `json:"created_at"`
}

// Call is the record of a call: its state while it runs and once it ended, with its
// timeline. Its JSON form is the call as the REST API shows it.
type Call struct {
	CallSid        string `json:"call_sid"`
	AccountSid     string `json:"account_sid"`
	ApplicationSid string `json:"application_sid,omitempty"`
	From           string `json:"from"`
	To             string `json:"to"`
	Direction      string `json:"direction"`
	CallStatus     string `json:"call_status"`
	Active         bool   `json:"active"`
	// Node is the id of the node that runs (or ran) the call, in a database several
	// nodes share; empty on a record saved before nodes had ids.
	Node      string     `json:"node,omitempty"`
	Reason    string     `json:"reason,omitempty"`
	SipStatus int        `json:"sip_status,omitempty"`
	CreatedAt time.Time  `json:"created_at"`
	EndedAt   *time.Time `json:"ended_at,omitempty"`
	// ExpectationsFailed lists the scenario's expectations the call did not meet.
	ExpectationsFailed []string `json:"expectations_failed,omitempty"`
	// Timeline holds the call's events in the `simulate --json` format.
	Timeline []json.RawMessage `json:"timeline,omitempty"`
	// StatusDeliveries are the outbox deliveries of the call's status notifications
	// (docs/outbox.md §7), read in the outbox API.
	StatusDeliveries []StatusDelivery `json:"status_deliveries,omitempty"`
	// Recovery is what the node needs, should it stop without ending the call (a
	// crash), to send the call's final status notification at its next start. It is
	// saved with the record, returned by Store.ActiveCalls only, and never shown. Nil
	// for a call without a status hook.
	Recovery *CallRecovery `json:"-"`
}

// CallRecovery is a Call's Recovery.
type CallRecovery struct {
	// AppURL is the call's application URL: a relative status hook resolves against
	// it.
	AppURL string `json:"app_url"`
	// StatusHook is the call's status hook, with its credentials.
	StatusHook HookSpec `json:"status_hook"`
	// Fields are the call info its status notifications carry (call_sid, call_id,
	// from, to, customerData...).
	Fields map[string]any `json:"fields"`
}

// StatusDelivery names one outbox delivery of a call's status notifications, to be
// read in the outbox API (GET /api/v1/webhooks/{endpoint_id}/deliveries/{delivery_id}).
type StatusDelivery struct {
	DeliveryID string `json:"delivery_id"`
	EventID    string `json:"event_id"`
	EndpointID string `json:"endpoint_id"`
}

// Notifications are where an account's webhook endpoint notices go.
type Notifications struct {
	WebhookURL string   `json:"webhook_url" maxLength:"2048" doc:"Operational webhook: receives endpoint.paused, endpoint.disabled and endpoint.removed events, signed with the status_webhook_secret; empty for none"`
	Emails     []string `json:"emails" maxItems:"20" doc:"E-mailed each notice when the node has SWITCHBOARD_SMTP_URL"`
}

// TokenOrigin says where an API token came from.
type TokenOrigin string

// The origins of API tokens.
const (
	// TokenFromAPI: created with its account through the REST API. It stays until
	// its account is deleted.
	TokenFromAPI TokenOrigin = "api"
	// TokenFromBootstrap: installed by a bootstrap file. The next bootstrap token of
	// the same account replaces it, so rotating it in the file revokes the old one.
	TokenFromBootstrap TokenOrigin = "bootstrap"
)

// Node is a node's lease on the calls it runs, in a database that several nodes
// share: while the lease is live, the node's calls are its own; once it expired,
// another node records them as ended (Store.InterruptLostCalls).
type Node struct {
	ID string
	// URL is where the node's API answers other nodes: live control of its calls is
	// forwarded there.
	URL        string
	LeaseUntil time.Time
	// Live reports whether the lease had not expired when it was read, by the
	// store's clock (the database's on PostgreSQL).
	Live bool
}
