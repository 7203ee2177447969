package transport

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/hashicorp/go-retryablehttp"
	"github.com/rs/zerolog"

	"github.com/switchboard-voice/switchboard/fragment"
	"github.com/switchboard-voice/switchboard/retry"
)

// HookClientOptions configure a HookClient. Zero values take the defaults stated.
type HookClientOptions struct {
	// Rules are the egress rules. Default (no Schemes): CallControlRules(false).
	Rules EgressRules
	// Timeout bounds the connection (lookup, TCP, TLS) and the wait for response
	// headers together, and then the body's read. Default 10 s (JAMBONES_HTTP_TIMEOUT).
	Timeout time.Duration
	// UserAgent is sent on every request. Default "jambonz".
	UserAgent string
	// MaxBody caps the response body read. Default 1 MiB.
	MaxBody int64
	// Clock timestamps attempts and signatures. Default retry.SystemClock.
	Clock retry.Clock
	// Sleep waits between attempts and returns early with ctx's error. Default: a
	// real timer. Tests inject one that records the delays.
	Sleep func(ctx context.Context, d time.Duration) error
	// Logger receives a debug line per attempt. Default: disabled.
	Logger zerolog.Logger
	// Resolver and TLSConfig are passed to NewHTTPClient (tests inject them).
	Resolver  Resolver
	TLSConfig *tls.Config
	// MaxIdleConnsPerHost is passed to NewHTTPClient: the idle connections kept per
	// application host. Default 4; size it to the requests made at once.
	MaxIdleConnsPerHost int
	// Connect is passed to NewHTTPClient (ClientOptions.Connect). Default: none.
	Connect ConnectFunc

	network *network // tests only: see ClientOptions.network
}

// Defaults of HookClientOptions.
const (
	DefaultHookTimeout = 10 * time.Second
	DefaultUserAgent   = "jambonz"
	DefaultMaxBody     = 1 << 20
)

// WithDefaults returns o with every zero value replaced by its default. Every value
// is accepted: a Timeout or MaxBody below zero takes its default too, so there is
// nothing for NewHookClient to refuse.
func (o HookClientOptions) WithDefaults() HookClientOptions {
	if len(o.Rules.Schemes) == 0 {
		o.Rules = CallControlRules(false)
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultHookTimeout
	}
	if o.UserAgent == "" {
		o.UserAgent = DefaultUserAgent
	}
	if o.MaxBody <= 0 {
		o.MaxBody = DefaultMaxBody
	}
	if o.Clock == nil {
		o.Clock = retry.SystemClock{}
	}
	if o.Sleep == nil {
		o.Sleep = Sleep
	}
	return o
}

// Sleep waits d or until ctx ends, whichever comes first, and returns ctx's error in
// the second case. It is the default Sleep of the clients in this package and below.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// HookClient sends call-control webhooks (docs/call-control.md §3) with the retries of
// the target URL's policy (docs/call-control.md §1–2). It is safe for concurrent use.
type HookClient struct {
	opts HookClientOptions
	pool *http.Client // owns the connections
	http *http.Client // what retryablehttp uses (see keepIdle)
}

// NewHookClient returns a HookClient over NewHTTPClient(opts.Rules, ...).
func NewHookClient(opts HookClientOptions) *HookClient {
	opts = opts.WithDefaults()
	pool, view := opts.clients(opts.Connect, false)
	return &HookClient{opts: opts, pool: pool, http: view}
}

// clients returns the client that owns the connections, and the view of it that
// retryablehttp uses.
func (o HookClientOptions) clients(connect ConnectFunc, own bool) (pool, view *http.Client) {
	pool = NewHTTPClient(o.Rules, ClientOptions{
		ConnectTimeout:        o.Timeout,
		ResponseHeaderTimeout: o.Timeout,
		Resolver:              o.Resolver,
		TLSConfig:             o.TLSConfig,
		MaxIdleConnsPerHost:   o.MaxIdleConnsPerHost,
		Connect:               connect,
		network:               o.network,
		DisableKeepAlives:     own,
	})
	// retryablehttp closes the client's idle connections whenever a request gives
	// up; through this view that is a no-op, so one failing app does not empty the
	// pool that every other request shares.
	view = &http.Client{Transport: keepIdle{headerDeadline{base: pool.Transport, timeout: o.Timeout}},
		CheckRedirect: pool.CheckRedirect}
	return pool, view
}

// forRequest returns the client of one request: the shared one, or, for a request
// with its own Connect, a client of its own whose every attempt opens a connection
// through that Connect (after the client's own), closed at release.
func (c *HookClient) forRequest(hr HookRequest) (view *http.Client, release func()) {
	if hr.Connect == nil {
		return c.http, func() {}
	}
	outer := c.opts.Connect
	connect := func(ctx context.Context, network, address string, dial func(context.Context, string, string) (net.Conn, error)) (net.Conn, error) {
		if outer != nil {
			base := dial
			dial = func(ctx context.Context, network, address string) (net.Conn, error) {
				return outer(ctx, network, address, base)
			}
		}
		return hr.Connect(ctx, network, address, dial)
	}
	pool, view := c.opts.clients(connect, true)
	return view, pool.CloseIdleConnections
}

// keepIdle hides the transport's CloseIdleConnections from http.Client.
type keepIdle struct{ http.RoundTripper }

// CloseIdleConnections closes pooled connections (call it when done with the client).
func (c *HookClient) CloseIdleConnections() { c.pool.CloseIdleConnections() }

// HookRequest is one webhook to send.
type HookRequest struct {
	// Target is the hook URL with its retry policy; its fragment is never sent.
	Target fragment.Target
	// Method is POST (default; JSON body) or GET (the payload's fields as query
	// parameters).
	Method string
	// Payload is the JSON body: a value that encodes as JSON (map[string]any, a
	// struct), or json.RawMessage / []byte taken as is. nil sends "{}".
	Payload any
	// Username and Password, when Username is set, are sent as HTTP Basic auth.
	Username, Password string
	// Secret, when set, adds a Jambonz-Signature header (GET signs the empty body).
	Secret string
	// PreviousSecret, when set with Secret, signs too: a second v1 entry of the
	// header, while a rotated secret's grace period lasts.
	PreviousSecret string
	// Header holds extra headers; the client's own headers win over them.
	Header http.Header
	// Accept, when set, checks the body of every successful answer (200, 202, 204,
	// capped at MaxBody): an error makes that
	// attempt an Unparseable failure (wrapping ErrBodyRejected), which is retried only
	// when the policy retries that class (rp=all, docs/call-control.md §1).
	Accept func(status int, header http.Header, body []byte) error
	// Observer, when set, is called after every attempt, in order.
	Observer func(Attempt)
	// Sleep, when set, waits between this request's attempts instead of the
	// client's Sleep (a simulated call lets the delays pass on its own clock). It
	// returns early with ctx's error.
	Sleep func(ctx context.Context, d time.Duration) error
	// Logger, when not the zero Logger, replaces the client's logger for this
	// request (a caller adds its own fields, such as the call sid). Default: the
	// client's.
	Logger zerolog.Logger
	// Connect, when set, makes the connections of this request's attempts (see
	// ConnectFunc), after the client's own: every attempt then has a connection of
	// its own, never pooled, so that what Connect does to it (a call's scenario
	// faults) happens to that attempt and to no other request.
	Connect ConnectFunc
}

// Attempt describes one try of a hook request.
type Attempt struct {
	// Number counts from 1.
	Number   int
	Start    time.Time
	Duration time.Duration
	// Status is the HTTP status, 0 if no response arrived.
	Status int
	// Class is retry.Success or the failure class.
	Class retry.Class
	Err   error
	// DelayBefore is the backoff waited before this attempt (0 for the first).
	DelayBefore time.Duration
}

// HookResponse is the final response of a hook request.
type HookResponse struct {
	Status int
	Header http.Header
	// Body is the response body, at most MaxBody bytes.
	Body     []byte
	Attempts []Attempt
}

// HookError is returned when a hook request did not succeed: retries ran out, the
// failure class is not retried, or the context ended. Class, Status and Err are
// those of the last attempt.
type HookError struct {
	Method, URL string
	Class       retry.Class
	Status      int
	Attempts    []Attempt
	// Reason says why no further attempt was made.
	Reason string
	Err    error
}

func (e *HookError) Error() string {
	what := string(e.Class)
	if e.Status != 0 {
		what = fmt.Sprintf("status %d (%s)", e.Status, e.Class)
	}
	msg := fmt.Sprintf("hook %s %s failed after %d attempt(s): %s", e.Method, e.URL, len(e.Attempts), what)
	if e.Reason != "" {
		msg += "; " + e.Reason
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *HookError) Unwrap() error { return e.Err }

// Do sends the hook, retrying per hr.Target.Policy, and returns the response on 200,
// 202 or 204. Otherwise it returns a *HookError and, when the last attempt got an
// answer, that response too. A request that cannot be built (bad payload, method)
// returns an error wrapping ErrInvalidRequest and sends nothing. When ctx ends, the
// current attempt or wait stops and the error's Class is retry.Canceled.
func (c *HookClient) Do(ctx context.Context, hr HookRequest) (*HookResponse, error) {
	shape, err := shapeRequest(hr)
	if err != nil {
		return nil, err
	}
	var body any
	if shape.body != nil {
		body = shape.body
	}
	req, err := retryablehttp.NewRequestWithContext(ctx, shape.method, shape.url, body)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidRequest, err)
	}
	for k, vs := range hr.Header {
		req.Header[http.CanonicalHeaderKey(k)] = append([]string(nil), vs...)
	}
	req.Header.Set("User-Agent", c.opts.UserAgent)
	if shape.method == http.MethodPost {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if hr.Username != "" {
		req.SetBasicAuth(hr.Username, hr.Password)
	}

	rn := hookRunners.Get().(*hookRunner)
	defer rn.release()
	run := &rn.run
	*run = hookRun{
		client: c,
		ctx:    ctx,
		req:    hr,
		shape:  shape,
		policy: retry.CallControl(hr.Target.Policy),
	}
	run.sign(req.Request)
	req.SetResponseHandler(rn.readBody)

	httpClient, release := c.forRequest(hr)
	defer release()
	rn.rc.HTTPClient, rn.rc.RetryMax = httpClient, run.policy.MaxAttempts-1
	resp, doErr := rn.rc.Do(req)
	return run.finish(resp, doErr)
}

// hookRunner is a request's hookRun with the retryablehttp client that drives it,
// reused from request to request (hookRunners): the client and its callbacks, bound
// to the run, are made once rather than for every hook.
type hookRunner struct {
	run      hookRun
	rc       retryablehttp.Client
	readBody func(*http.Response) error
}

var hookRunners = sync.Pool{New: func() any {
	rn := &hookRunner{}
	rn.rc = retryablehttp.Client{
		Logger:         nil, // we log through zerolog in record
		RequestLogHook: rn.run.beforeAttempt,
		CheckRetry:     rn.run.checkRetry,
		Backoff:        rn.run.backoff,
		ErrorHandler:   retryablehttp.PassthroughErrorHandler,
		PrepareRetry:   rn.run.prepareRetry,
	}
	rn.readBody = rn.run.readBody
	return rn
}}

// release returns rn to the pool, holding nothing of its request (the response and
// the attempts went to the caller).
func (rn *hookRunner) release() {
	rn.run = hookRun{}
	rn.rc.HTTPClient = nil
	hookRunners.Put(rn)
}
