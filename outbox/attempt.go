package outbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/switchboard-voice/switchboard/outbox/internal/decide"
	"github.com/switchboard-voice/switchboard/outbox/internal/policy"
	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
	"github.com/switchboard-voice/switchboard/retry"
	"github.com/switchboard-voice/switchboard/transport"
	"github.com/switchboard-voice/switchboard/transport/webhooksig"
)

// Response storage limits (docs/outbox.md §2 step 5).
const (
	// maxStoredResponse caps the stored response body.
	maxStoredResponse = 64 << 10
	// maxStoredNonJSON is how many characters of a body that is not JSON are kept.
	maxStoredNonJSON = 1000
)

// errSchemeRefused is the refusal of a URL scheme the endpoint's policy does not allow.
var errSchemeRefused = errors.New("scheme not allowed by the endpoint's profile")

// attempt makes one HTTP attempt of a claimed delivery (docs/outbox.md §2), its outcome
// named in the outbox's classes (AttemptClass). ctx is the dispatcher's: when it is
// canceled (shutdown) the result is released, not counted.
func (o *Outbox) attempt(ctx context.Context, job outboxdriver.Job, p policy.Policy) (r decide.Result) {
	now := o.cfg.Clock.Now()
	a := Attempt{At: now, ScheduledAt: job.Delivery.NextAttemptAt}
	body, err := o.cfg.Renderer(ctx, job.Event, job.Endpoint)
	if err != nil {
		return decide.Result{Fault: fmt.Errorf("rendering the payload: %w", err)}
	}
	signer, err := webhooksig.NewSigner(liveKeys(job.Endpoint.Secrets, now)...)
	if err != nil {
		return decide.Result{Fault: fmt.Errorf("signing key: %w", err)}
	}
	u, err := url.Parse(job.Endpoint.URL)
	if err != nil {
		a.Class, a.Error = ClassNetwork, err.Error()
		return decide.Result{Attempt: a}
	}
	if u.Scheme != "https" && !(u.Scheme == "http" && p.AllowHTTP) {
		a.Class = ClassEgressRefused
		a.Error = fmt.Sprintf("%v: %s (%s profile)", errSchemeRefused, u.Scheme, p.Profile)
		return decide.Result{Attempt: a}
	}

	reqCtx, cancel := context.WithTimeout(ctx, p.AttemptTimeout(o.cfg.LeaseDuration))
	defer cancel()
	reqCtx, span := o.startAttempt(reqCtx, job, u)
	defer func() { endAttempt(span, r) }()
	out, err := o.shape(reqCtx, job, now, body, signer, u, p)
	if err != nil {
		if ctx.Err() != nil {
			return decide.Result{Released: true}
		}
		return decide.Result{Fault: err}
	}
	if span != nil {
		span.SetName("webhook " + out.method)
		span.SetAttributes(semconv.HTTPRequestMethodKey.String(out.method))
		injectTraceParent(reqCtx, out.header)
	}
	a.RequestHeaders = maskHeaders(out.header, p.DeliveryHeader)
	traced, peers := transport.TracePeers(reqCtx)
	req, err := http.NewRequestWithContext(traced, out.method, out.url, bytes.NewReader(out.body))
	if err != nil {
		a.Class, a.Error = ClassNetwork, err.Error()
		return decide.Result{Attempt: a}
	}
	req.Header = out.header

	start := time.Now()
	resp, err := o.client(job.Endpoint).Do(req)
	if err != nil {
		a.Duration = time.Since(start)
		if ctx.Err() != nil {
			return decide.Result{Released: true}
		}
		// The policy's timeout covers connect and response together.
		a.Class, a.Error = classOfFailure(err, reqCtx.Err() != nil), err.Error()
		if !o.readBack(job.Endpoint, peers) {
			a.Error = fmt.Sprintf("%s (%s)", a.Class, notReadBack)
		}
		return decide.Result{Attempt: a}
	}
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxStoredResponse+1))
	_ = resp.Body.Close()
	a.Duration = time.Since(start)
	a.Status = resp.StatusCode
	if o.readBack(job.Endpoint, peers) {
		a.Response = storedResponse(raw, resp.Header.Get("Content-Type"))
	}
	a.Class = classOfStatus(resp.StatusCode)
	if a.Class == ClassSuccess {
		return decide.Result{Attempt: a}
	}
	r = decide.Result{Attempt: a}
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
		r.AnsweredAt = o.cfg.Clock.Now()
		r.RetryAfter, r.HasRetryAfter = retry.ParseRetryAfter(resp.Header.Get("Retry-After"), r.AnsweredAt)
	}
	return r
}

// notReadBack says, in place of an error's text, why the delivery log keeps none.
const notReadBack = "not kept: what this destination answers is not shown to the endpoint's owner"

// readBack reports whether the delivery log may keep what the destinations of an
// attempt of ep answered (Config.ReadBack).
func (o *Outbox) readBack(ep Endpoint, peers *transport.Peers) bool {
	if o.cfg.ReadBack == nil {
		return true
	}
	return peers.All(func(p transport.Peer) bool { return o.cfg.ReadBack(ep, p) })
}

// storedResponse applies the storage limits to a response body: at most
// maxStoredResponse bytes, and a body that is not JSON cut to maxStoredNonJSON
// characters. A body cut by the byte cap counts as JSON when its Content-Type says so.
func storedResponse(raw []byte, contentType string) string {
	truncated := len(raw) > maxStoredResponse
	if truncated {
		raw = raw[:maxStoredResponse]
	}
	isJSON := json.Valid(raw)
	if truncated {
		isJSON = strings.Contains(strings.ToLower(contentType), "json")
	}
	s := strings.ToValidUTF8(string(raw), "\uFFFD")
	s = strings.ReplaceAll(s, "\x00", "\uFFFD") // PostgreSQL text cannot hold NUL
	if isJSON {
		return cutAt(s, maxStoredResponse, utf8.RuneLen)
	}
	return cutAt(s, maxStoredNonJSON, func(rune) int { return 1 })
}

// cutAt returns the longest prefix of s, on a character boundary, whose size (the sum
// of size over its characters) is at most limit.
func cutAt(s string, limit int, size func(rune) int) string {
	n := 0
	for i, r := range s {
		if n += size(r); n > limit {
			return s[:i]
		}
	}
	return s
}

// liveKeys returns the endpoint's keys that have not expired at now.
func liveKeys(secrets []Secret, now time.Time) []string {
	keys := make([]string, 0, len(secrets))
	for _, s := range secrets {
		if s.ExpiresAt == nil || now.Before(*s.ExpiresAt) {
			keys = append(keys, s.Key)
		}
	}
	return keys
}

// classOfStatus is the class of an answer: any 2xx is a success (docs/outbox.md §2
// step 4).
func classOfStatus(code int) AttemptClass {
	switch {
	case code >= 200 && code < 300:
		return ClassSuccess
	case code == http.StatusGone:
		return ClassGone
	case code == http.StatusTooManyRequests:
		return ClassThrottled
	case code >= 300 && code < 400:
		return ClassRedirect
	case code >= 400 && code < 500:
		return ClassHTTP4xx
	case code >= 500 && code < 600:
		return ClassHTTP5xx
	default:
		return ClassNetwork // 1xx: not an answer a receiver gives
	}
}

// classOfFailure is the class of a request that got no answer: timeout when the
// attempt's deadline passed (timedOut) or the transport timed out, egress_refused when
// the egress rules refused the destination, network for every other failure
// (refused, reset, TLS, DNS, an answer that is not HTTP), which the outbox does not
// tell apart as call control's rp does.
func classOfFailure(err error, timedOut bool) AttemptClass {
	switch {
	case timedOut, transport.Classify(err) == retry.ResponseTimeout:
		return ClassTimeout
	case errors.Is(err, transport.ErrEgressRefused):
		return ClassEgressRefused
	}
	return ClassNetwork
}
