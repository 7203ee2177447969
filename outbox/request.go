package outbox

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/switchboard-voice/switchboard/outbox/internal/policy"
	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
	"github.com/switchboard-voice/switchboard/transport"
	"github.com/switchboard-voice/switchboard/transport/webhooksig"
)

// Request is one attempt's HTTP request as the outbox builds it, shown to
// Config.Request before it is signed and sent (docs/outbox.md §7). The hook may set
// Method, Basic auth and headers of its own; the outbox then shapes the request for
// the method, signs it with Standard Webhooks over the exact bytes it sends (Body) and
// sends it. A Request is valid only during the hook's call.
type Request struct {
	// Event, Endpoint and Delivery are what the attempt delivers, as they are at
	// attempt time. The hook must not change them.
	Event    Event
	Endpoint Endpoint
	Delivery Delivery
	// At is the attempt's time: the webhook-timestamp of its signature, for a
	// signature of the hook's own that carries a time.
	At time.Time
	// Method is POST (as built) or GET. A GET sends the rendered body's top-level
	// JSON fields as query parameters, merged with the URL's own query, and no body.
	Method string
	// Header is sent as the hook leaves it, under the headers the outbox sets last:
	// webhook-id, webhook-timestamp and webhook-signature, and no Content-Type for a
	// GET. As built it holds Content-Type, User-Agent (Config.UserAgent), the
	// delivery header of the endpoint's policy, if any, and the endpoint's own
	// headers (Endpoint.Headers, which may replace User-Agent).
	Header http.Header

	body []byte // as rendered
}

// Body returns the bytes the request sends with its Method as it is now: the rendered
// body for POST, none for GET. A signature of the hook's own covers Body once Method
// is final, so set Method first.
func (r *Request) Body() []byte {
	if r.Method == http.MethodGet {
		return nil
	}
	return r.body
}

// SetBasicAuth sends username and password as HTTP Basic credentials (RFC 7617).
func (r *Request) SetBasicAuth(username, password string) {
	r.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(username+":"+password)))
}

// shaped is an attempt's request as it is sent.
type shaped struct {
	method string
	url    string
	body   []byte // nil for a GET: the signature then covers the empty body
	header http.Header
}

// shape builds the request of job's attempt at now to u under p, passes it through
// Config.Request, shapes it for its method and signs what it sends with signer. An
// error is a fault on our side.
func (o *Outbox) shape(ctx context.Context, job outboxdriver.Job, now time.Time, body []byte, signer *webhooksig.Signer,
	u *url.URL, p policy.Policy) (shaped, error) {
	r := &Request{Event: job.Event, Endpoint: job.Endpoint, Delivery: job.Delivery, At: now,
		Method: http.MethodPost, Header: http.Header{}, body: body}
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("User-Agent", o.cfg.UserAgent)
	if p.DeliveryHeader != "" {
		r.Header.Set(p.DeliveryHeader, job.Delivery.ID)
	}
	for name, value := range job.Endpoint.Headers {
		r.Header[name] = []string{value} // canonical: checked when written
	}
	if o.cfg.Request != nil {
		if err := o.cfg.Request(ctx, r); err != nil {
			return shaped{}, fmt.Errorf("request hook: %w", err)
		}
	}
	out := shaped{method: r.Method, url: u.String(), body: r.Body(), header: r.Header}
	switch r.Method {
	case http.MethodPost:
	case http.MethodGet:
		q, err := transport.QueryFields(body)
		if err != nil {
			return shaped{}, fmt.Errorf("a GET request: %w", err)
		}
		for k, vs := range u.Query() {
			for _, v := range vs {
				q.Add(k, v)
			}
		}
		withQuery := *u
		withQuery.RawQuery = q.Encode()
		out.url = withQuery.String()
		out.header.Del("Content-Type")
	default:
		return shaped{}, fmt.Errorf("request hook: method %q (want GET or POST)", r.Method)
	}
	signed, err := signer.Headers(job.Event.ID, now, out.body)
	if err != nil {
		return shaped{}, fmt.Errorf("signing: %w", err)
	}
	for k, v := range signed {
		out.header[k] = v
	}
	return out, nil
}
