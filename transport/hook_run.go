package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"time"

	"github.com/hashicorp/go-retryablehttp"

	"github.com/switchboard-voice/switchboard/retry"
	"github.com/switchboard-voice/switchboard/transport/webhooksig"
)

// hookRun is the state of one HookClient.Do: retryablehttp drives the loop and
// calls back into it before each attempt (beforeAttempt), after each answer
// (checkRetry, readBody), for the wait (backoff) and before a retry (prepareRetry).
type hookRun struct {
	client *HookClient
	ctx    context.Context
	req    HookRequest
	shape  requestShape
	policy retry.Policy

	attempts []Attempt
	current  Attempt // the attempt in flight
	bodyRead bool    // readBody ran for the current attempt
	body     []byte  // body of the last final response
	decision retry.Decision
	waited   time.Duration // the backoff before the next attempt
	sleepErr error
}

func (r *hookRun) sign(req *http.Request) {
	if r.req.Secret == "" {
		return
	}
	req.Header.Set(webhooksig.JambonzSignatureHeader, webhooksig.SignJambonzAll([]string{r.req.Secret, r.req.PreviousSecret}, r.client.opts.Clock.Now(), r.shape.body))
}

// beforeAttempt is retryablehttp's RequestLogHook, called before every attempt;
// retryNumber is 0 for the first.
func (r *hookRun) beforeAttempt(_ retryablehttp.Logger, _ *http.Request, retryNumber int) {
	r.current = Attempt{Number: retryNumber + 1, Start: r.client.opts.Clock.Now(), DelayBefore: r.waited}
	r.waited, r.bodyRead = 0, false
}

// readBody is the response handler: retryablehttp calls it for the answer it is
// about to return, i.e. when checkRetry did not ask for another attempt. It reads
// the capped body; its error goes back through checkRetry.
func (r *hookRun) readBody(resp *http.Response) error {
	r.bodyRead = true
	defer func() {
		_ = resp.Body.Close()
		resp.Body = http.NoBody
	}()
	limit := r.client.opts.MaxBody
	// The body gets the same bound as the headers, from the attempt's own timer
	// (headerDeadline): a peer that sends headers and then stalls must not hold the
	// call.
	b, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil && bodyTimedOut(resp) {
		r.body = b
		return fmt.Errorf("%w after %s", ErrBodyTimeout, r.client.opts.Timeout)
	}
	if int64(len(b)) > limit {
		r.body = b[:limit]
		return fmt.Errorf("%w (%d bytes)", ErrBodyTooLarge, limit)
	}
	r.body = b
	if err != nil {
		return fmt.Errorf("reading response body: %w", err)
	}
	if r.req.Accept != nil && retry.CallControlSuccess(resp.StatusCode) {
		if err := r.req.Accept(resp.StatusCode, resp.Header, b); err != nil {
			return fmt.Errorf("%w: %w", ErrBodyRejected, err)
		}
	}
	return nil
}

// checkRetry is retryablehttp's CheckRetry. For an answer whose status ends the
// request, it returns false without recording: readBody runs next and checkRetry
// is called again with the body's outcome, which is then recorded.
func (r *hookRun) checkRetry(ctx context.Context, resp *http.Response, err error) (bool, error) {
	var o retry.Outcome
	status := 0
	if resp != nil {
		status = resp.StatusCode
	}
	switch {
	case ctx.Err() != nil:
		if err == nil {
			err = ctx.Err()
		}
		r.record(status, retry.Canceled, err)
		r.decision = retry.Decision{Reason: "context ended"}
		return false, ctx.Err()
	case err != nil && resp != nil && errors.Is(err, ErrBodyTimeout):
		o.Class = retry.ResponseTimeout
	case err != nil && resp != nil:
		// The answer arrived but its body did not (reset, or over the cap).
		o.Class = retry.Unparseable
	case err != nil:
		o.Class = Classify(err)
	default:
		if retry.CallControlSuccess(status) {
			o.Class = retry.Success
		} else {
			o.Class = retry.ClassifyStatus(status)
		}
		o.RetryAfter, o.HasRetryAfter = retry.ParseRetryAfter(resp.Header.Get("Retry-After"), r.client.opts.Clock.Now())
	}
	d := retry.NextAttempt(r.policy, o, r.current.Number)
	if !d.Retry && err == nil && !r.bodyRead {
		return false, nil // provisional: readBody and a second call follow
	}
	r.decision = d
	r.record(status, o.Class, err)
	return d.Retry, nil
}

func (r *hookRun) record(status int, class retry.Class, err error) {
	a := r.current
	a.Duration = r.client.opts.Clock.Now().Sub(a.Start)
	a.Status, a.Class, a.Err = status, class, err
	r.attempts = append(r.attempts, a)
	logger := r.client.opts.Logger
	if !reflect.ValueOf(&r.req.Logger).Elem().IsZero() { // the zero Logger: the request has none of its own (by pointer: no copy to box)
		logger = r.req.Logger
	}
	log := logger.Debug().
		Str("method", r.shape.method).Str("url", r.shape.url).
		Int("attempt", a.Number).Int("status", status).Str("class", string(class)).
		Dur("duration", a.Duration).Dur("delay_before", a.DelayBefore)
	if err != nil {
		log = log.AnErr("error", err)
	}
	log.Msg("hook attempt")
	if r.req.Observer != nil {
		r.req.Observer(a)
	}
}

// backoff is retryablehttp's Backoff: it waits the decided delay through the
// request's Sleep (else the client's) and returns 0, so retryablehttp's own timer
// does not add to it.
func (r *hookRun) backoff(_, _ time.Duration, _ int, _ *http.Response) time.Duration {
	d := r.decision.Delay
	r.waited = d
	sleep := r.client.opts.Sleep
	if r.req.Sleep != nil {
		sleep = r.req.Sleep
	}
	if err := sleep(r.ctx, d); err != nil {
		r.sleepErr = err
	}
	return 0
}

// prepareRetry re-signs the request (a fresh timestamp) and stops the loop when the
// wait was interrupted.
func (r *hookRun) prepareRetry(req *http.Request) error {
	if r.sleepErr != nil {
		return r.sleepErr
	}
	if err := r.ctx.Err(); err != nil {
		return err
	}
	// retryablehttp shallow-copies the request; the header map is still shared with
	// the previous attempt, so replace it rather than writing into it.
	req.Header = req.Header.Clone()
	r.sign(req)
	return nil
}

// finish turns retryablehttp's result into ours.
func (r *hookRun) finish(resp *http.Response, doErr error) (*HookResponse, error) {
	var out *HookResponse
	if resp != nil {
		out = &HookResponse{Status: resp.StatusCode, Header: resp.Header, Body: r.body, Attempts: r.attempts}
	}
	var last Attempt
	if n := len(r.attempts); n > 0 {
		last = r.attempts[n-1]
	}
	if doErr == nil && last.Class == retry.Success {
		return out, nil
	}
	he := &HookError{
		Method: r.shape.method, URL: r.shape.url,
		Class: last.Class, Status: last.Status, Attempts: r.attempts,
		Reason: r.decision.Reason, Err: last.Err,
	}
	if ctxErr := r.ctx.Err(); ctxErr != nil || r.sleepErr != nil {
		// Ended while waiting (or between attempts): the last attempt's class stays
		// in Attempts; the request as a whole was canceled.
		he.Class, he.Reason = retry.Canceled, "context ended"
		if he.Err == nil || !errors.Is(he.Err, context.Canceled) && !errors.Is(he.Err, context.DeadlineExceeded) {
			he.Err = errors.Join(he.Err, contextErr(r.ctx, r.sleepErr))
		}
	}
	return out, he
}

func contextErr(ctx context.Context, sleepErr error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return sleepErr
}
