package retry

import "github.com/switchboard-voice/switchboard/fragment"

// Class is the outcome class of one failed attempt.
type Class string

// Failure classes. Call control retries them according to the URL's `rp` (see
// CallControl); the outbox according to its profile.
const (
	// Success is not a failure: the attempt was accepted.
	Success Class = "success"
	// Connect: the connection could not be established (refused, reset or aborted
	// before any response, TCP connect timeout, TLS handshake timeout, temporary DNS
	// failure).
	Connect Class = "ct"
	// ResponseTimeout: connected and sent, but no response headers in time.
	ResponseTimeout Class = "rt"
	// HandshakeTimeout: a WebSocket opening handshake that did not complete in time,
	// including a connect silently dropped. Retried under `ct` only when rp is explicit.
	HandshakeTimeout Class = "handshake_timeout"
	// Status4xx: a 4xx status other than 410 and 429.
	Status4xx Class = "4xx"
	// Status5xx: a 5xx status.
	Status5xx Class = "5xx"
	// Redirect: a 3xx status (redirects are never followed).
	Redirect Class = "redirect"
	// Gone: 410.
	Gone Class = "gone"
	// Throttled: 429.
	Throttled Class = "throttled"
	// UnexpectedStatus: a status that is neither accepted nor an error (1xx, or a 2xx
	// the caller does not accept, such as 201 for call control).
	UnexpectedStatus Class = "unexpected_status"
	// Unparseable: the peer answered something that is not a valid response.
	Unparseable Class = "unparseable"
	// EgressRefused: the egress rules refused the destination. Never a network fault.
	EgressRefused Class = "egress_refused"
	// Permanent: retrying cannot help (certificate that does not verify, NXDOMAIN,
	// malformed URL, unsupported scheme).
	Permanent Class = "permanent"
	// Internal: a fault on our side (store unavailable, signing key missing).
	Internal Class = "internal"
)

// ClassifyStatus maps an HTTP status that is not a success to its class. Callers
// decide first which statuses are successes (call control: 200, 202, 204; the outbox:
// any 2xx); everything else in 1xx/2xx is UnexpectedStatus.
func ClassifyStatus(code int) Class {
	switch {
	case code == 410:
		return Gone
	case code == 429:
		return Throttled
	case code >= 300 && code < 400:
		return Redirect
	case code >= 400 && code < 500:
		return Status4xx
	case code >= 500 && code < 600:
		return Status5xx
	default:
		return UnexpectedStatus
	}
}

// CallControlSuccess reports whether an HTTP status is a success for a call-control
// hook: 200, 202 or 204 only (docs/call-control.md §3).
func CallControlSuccess(code int) bool { return code == 200 || code == 202 || code == 204 }

// CoveredBy reports whether the URL policy p asks for class c to be retried.
// Egress refusals, permanent and internal failures are never retried.
func CoveredBy(c Class, p fragment.Policy) bool {
	switch c {
	case Connect:
		return p.Retries(fragment.Connect)
	case HandshakeTimeout:
		return p.RetriesHandshakeTimeout()
	case ResponseTimeout:
		return p.Retries(fragment.ResponseTimeout)
	case Status4xx, Gone, Throttled:
		return p.Retries(fragment.Status4xx)
	case Status5xx:
		return p.Retries(fragment.Status5xx)
	case Redirect, UnexpectedStatus, Unparseable:
		return p.Retries(fragment.All)
	default:
		return false
	}
}
