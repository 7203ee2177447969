package fragment

import (
	"slices"
	"strconv"
	"strings"
)

// Transport is the kind of connection an application URL asks for.
type Transport string

const (
	HTTP      Transport = "http"
	WebSocket Transport = "websocket"
)

// Class is a failure class that may appear in the `rp` parameter.
type Class string

// The classes accepted in `rp`.
const (
	Connect         Class = "ct"  // connection could not be established
	ResponseTimeout Class = "rt"  // no response headers in time (HTTP only)
	Status4xx       Class = "4xx" // a 4xx answer
	Status5xx       Class = "5xx" // a 5xx answer
	All             Class = "all" // any failure, including 3xx and unparseable answers
)

var knownClasses = []Class{Connect, ResponseTimeout, Status4xx, Status5xx, All}

// MaxRetryCount caps `rc`: larger values are treated as this.
const MaxRetryCount = 5

// DefaultRetryCount is the `rc` used when the URL gives none (or an invalid one).
func DefaultRetryCount(t Transport) int {
	if t == WebSocket {
		return 5
	}
	return 0
}

// Policy is the retry policy carried by a URL fragment.
type Policy struct {
	Transport Transport
	// RetryCount is the number of additional attempts after the first, 0..MaxRetryCount.
	RetryCount int
	// RetryCountDefault is true when RetryCount came from the transport's default.
	RetryCountDefault bool
	// RetryOn lists the classes worth retrying, in the order the URL gives them,
	// without duplicates.
	RetryOn []Class
	// RetryOnExplicit is true when the URL named at least one valid class in `rp`.
	RetryOnExplicit bool
	// Warnings describe parameters that were ignored or replaced by defaults.
	Warnings []string
}

// DefaultPolicy is the policy of a URL of transport t that has no retry fragment.
func DefaultPolicy(t Transport) Policy {
	return Policy{
		Transport:         t,
		RetryCount:        DefaultRetryCount(t),
		RetryCountDefault: true,
		RetryOn:           []Class{Connect},
	}
}

// Retries reports whether rp covers class c (directly or through `all`).
func (p Policy) Retries(c Class) bool {
	return slices.Contains(p.RetryOn, c) || slices.Contains(p.RetryOn, All)
}

// RetriesHandshakeTimeout reports whether a WebSocket opening handshake that times
// out (or a connect that is silently dropped) is retried. Under the default policy it
// is not; when `rp` is explicit and contains `ct` or `all`, it is. Always false for HTTP.
func (p Policy) RetriesHandshakeTimeout() bool {
	return p.Transport == WebSocket && p.RetryOnExplicit && p.Retries(Connect)
}

// MaxAttempts is the number of attempts in all: the first plus RetryCount retries.
func (p Policy) MaxAttempts() int { return 1 + p.RetryCount }

// Fragment renders the policy back as a fragment, e.g. "rc=3&rp=5xx,ct".
func (p Policy) Fragment() string {
	parts := make([]string, len(p.RetryOn))
	for i, c := range p.RetryOn {
		parts[i] = string(c)
	}
	return "rc=" + strconv.Itoa(p.RetryCount) + "&rp=" + strings.Join(parts, ",")
}
