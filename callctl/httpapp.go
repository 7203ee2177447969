package callctl

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/switchboard-voice/switchboard/callctl/verbs"
	"github.com/switchboard-voice/switchboard/fragment"
	"github.com/switchboard-voice/switchboard/retry"
	"github.com/switchboard-voice/switchboard/transport"
)

// httpApp is an application reached by HTTP webhooks (docs/call-control.md §3).
type httpApp struct {
	c *callRun
}

func newHTTPApp(c *callRun) *httpApp { return &httpApp{c: c} }

// start requests the call hook. When it fails the call is rejected with
// WebhookErrorReturn (docs/call-control.md §6); when its verbs are invalid, too.
func (a *httpApp) start(ctx context.Context) ([]verbs.Verb, bool) {
	c := a.c
	resp, err := a.request(ctx, c.opts.app, c.opts.Method, c.opts.Username, c.opts.Password, c.info.fields(), acceptVerbs)
	if err != nil && ctx.Err() != nil {
		c.endCanceled() // stopped, not a hook failure: no alert
		return nil, false
	}
	if err != nil && interrupted(err) {
		// Cut short on the wall clock: the call ended (the caller hung up), or a
		// redirect waits for execute to move the call.
		return nil, !c.ended
	}
	if err != nil && !rejectedVerbs(err) {
		c.alert(hookAlertType(err), c.opts.app.Clean(), c.failureDetail("call hook", c.opts.app.Clean(), err))
		c.end(StatusFailed, ReasonCallHookFailed, c.opts.WebhookErrorReturn)
		return nil, false
	}
	vs, err := responseVerbs(resp)
	if err != nil {
		c.alert(AlertInvalidAppPayload, c.opts.app.Clean(), fmt.Sprintf("call hook %s: %v", c.opts.app.Clean(), err))
		c.end(StatusFailed, ReasonInvalidPayload, c.opts.WebhookErrorReturn)
		return nil, false
	}
	return vs, true
}

func (a *httpApp) hook(ctx context.Context, _ string, h *verbs.Hook, payload map[string]any) ([]verbs.Verb, bool, bool) {
	c := a.c
	t, err := fragment.Resolve(c.opts.app, h.URL)
	if err != nil {
		c.alert(AlertInvalidAppPayload, fragment.Redact(h.URL), fmt.Sprintf("hook %q: %v", fragment.Redact(h.URL), err))
		return nil, false, false
	}
	user, pass := h.Username, h.Password
	if user == "" && t.URL.Host == c.opts.app.URL.Host {
		// The application's credentials, but only toward the application's own host.
		user, pass = c.opts.Username, c.opts.Password
	}
	resp, err := a.request(ctx, t, h.MethodOrDefault(), user, pass, payload, acceptVerbs)
	if err != nil && !rejectedVerbs(err) {
		// docs/call-control.md §6: logged and alerted; the call continues with the verbs
		// it has. A hook cut short because the call was stopped is no failure of the
		// application.
		if ctx.Err() == nil && !interrupted(err) {
			c.alert(hookAlertType(err), t.Clean(), c.failureDetail("hook", t.Clean(), err))
		}
		return nil, false, false
	}
	vs, err := responseVerbs(resp)
	if err != nil {
		c.alert(AlertInvalidAppPayload, t.Clean(), fmt.Sprintf("hook %s: %v", t.Clean(), err))
		return nil, false, false
	}
	return vs, len(vs) > 0, true
}

// request sends one hook with its retries, recording every attempt. accept, when
// set, checks a successful answer's body (acceptVerbs).
func (a *httpApp) request(ctx context.Context, t fragment.Target, method, user, pass string, payload map[string]any,
	accept func(int, http.Header, []byte) error) (*transport.HookResponse, error) {
	c := a.c
	c.result.Hooks = append(c.result.Hooks, t.URL.Path)
	logger := c.opts.Logger.With().Str("call_sid", c.info.CallSid).Logger()
	url := t.Clean()
	attempts := 0 // made so far
	req := c.result.addRequest(Request{Transport: string(fragment.HTTP), Hook: t.URL.Path, Method: method, Payload: payload,
		Event: c.timeline.len(), HookIndex: len(c.result.Hooks) - 1})
	return c.opts.Hooks.Do(ctx, transport.HookRequest{
		Target:         t,
		Method:         method,
		Payload:        payload,
		Username:       user,
		Password:       pass,
		Secret:         c.opts.Secret,
		PreviousSecret: c.opts.PreviousSecret,
		Accept:         accept,
		Logger:         logger,
		Connect:        c.netConnect(),
		Observer: func(at transport.Attempt) {
			attempts = at.Number
			c.recordFaults(url, at.Number)
			if at.Status != 0 {
				c.result.answered(req, at.Duration)
			}
			c.result.HookLatencies = append(c.result.HookLatencies, at.Duration)
			c.record(Event{Kind: KindHookAttempt, URL: url, Transport: "http", Attempt: at.Number,
				HTTPStatus: at.Status, Class: string(at.Class), Duration: at.Duration})
		},
		// The delays pass on the call's clock (a shared client sleeps for real).
		Sleep: func(ctx context.Context, d time.Duration) error {
			return c.retryWait(ctx, url, attempts+1, d)
		},
	})
}

// acceptVerbs makes a successful answer whose verbs cannot be used an unparseable
// response, which rp=all retries (docs/call-control.md §1).
func acceptVerbs(status int, header http.Header, body []byte) error {
	_, err := responseVerbs(&transport.HookResponse{Status: status, Header: header, Body: body})
	return err
}

// rejectedVerbs reports whether a hook failed only because acceptVerbs rejected its
// last answer: the retries, if any, are spent, and the answer is an invalid payload
// (its verbs are decoded again for the error).
func rejectedVerbs(err error) bool {
	var he *transport.HookError
	return errors.As(err, &he) && he.Class == retry.Unparseable && errors.Is(he.Err, transport.ErrBodyRejected)
}

// responseVerbs decodes the verbs of a hook response: a JSON array when the
// Content-Type is JSON; an empty body (or one of blanks only) or a 204 means no
// verbs. A body of another type (an HTML page, a JSON array sent as text/plain) is
// what jambonz reads as no application at all and alerts as "malformed jambonz
// payload: must be array": an invalid payload here too, whose error names the cause.
func responseVerbs(resp *transport.HookResponse) ([]verbs.Verb, error) {
	if len(bytes.TrimSpace(resp.Body)) == 0 || resp.Status == 204 {
		return nil, nil
	}
	ct := resp.Header.Get("Content-Type")
	if mt, _, err := mime.ParseMediaType(ct); err != nil || !isJSONType(mt) {
		return nil, notJSONVerbs(resp.Status, ct, resp.Body)
	}
	vs, err := verbs.Decode(resp.Body)
	if err != nil {
		return nil, err
	}
	return vs, nil
}

// notJSONVerbs says why a successful answer's body is not verbs: its type, the start
// of the body, and the fix when the body is JSON sent under another type.
func notJSONVerbs(status int, contentType string, body []byte) error {
	what := "no Content-Type"
	if contentType != "" {
		what = fmt.Sprintf("Content-Type %q", contentType)
	}
	hint := ""
	if json.Valid(body) {
		hint = "; the body is JSON: send it with Content-Type: application/json"
	}
	return fmt.Errorf("%w: malformed jambonz payload: must be array (a %d answer with %s, body %s%s)",
		verbs.ErrInvalidPayload, status, what, bodyStart(body), hint)
}

// bodyStart quotes the first bytes of a body, for an alert.
func bodyStart(body []byte) string {
	const max = 64
	if len(body) <= max {
		return strconv.Quote(string(body))
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(body[cut]) {
		cut--
	}
	return strconv.Quote(string(body[:cut])) + "..."
}

func isJSONType(mt string) bool {
	return mt == "application/json" || len(mt) > 5 && mt[len(mt)-5:] == "+json"
}

// notify sends a status notification to the status hook, if there is one. Its
// failure is alerted and changes nothing else.
func (a *httpApp) notify(ctx context.Context, payload map[string]any) {
	c := a.c
	if c.opts.statusURL == nil {
		return
	}
	if c.opts.StatusNotifier != nil {
		c.opts.StatusNotifier.NotifyStatus(ctx, *c.opts.statusURL, payload)
		return
	}
	if _, err := a.request(ctx, *c.opts.statusURL, c.opts.StatusHookMethod, c.opts.StatusHookUsername, c.opts.StatusHookPassword, payload, nil); err != nil && ctx.Err() == nil && !interrupted(err) {
		c.alert(hookAlertType(err), c.opts.statusURL.Clean(), c.failureDetail("status hook", c.opts.statusURL.Clean(), err))
	}
}

func (a *httpApp) between(context.Context) {}

// listen: an HTTP application sends nothing unasked; the time just passes.
func (a *httpApp) listen(ctx context.Context, d time.Duration) error { return a.c.clock.Sleep(ctx, d) }

func (a *httpApp) verbStatus(context.Context, map[string]any) {}

// exhausted: an HTTP application's call hangs up when its verbs run out.
func (a *httpApp) exhausted(context.Context) (bool, string) { return false, ReasonVerbsExhausted }

// finish sends the final status to the status hook. A canceled call's context is
// over, so the notification gets a short context of its own.
func (a *httpApp) finish(ctx context.Context) {
	if ctx.Err() != nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
	}
	a.notify(ctx, a.c.info.fields())
}

// message requests h with data (llm:event, a dialed leg's status); the answer is
// ignored. A message without a hook (tts:*) has nowhere to go over HTTP.
func (a *httpApp) message(ctx context.Context, _ string, h *verbs.Hook, data map[string]any) {
	if h == nil {
		return
	}
	t, err := fragment.Resolve(a.c.opts.app, h.URL)
	if err != nil {
		a.c.alert(AlertInvalidAppPayload, fragment.Redact(h.URL), fmt.Sprintf("hook %q: %v", fragment.Redact(h.URL), err))
		return
	}
	user, pass := a.credentials(t, h)
	if _, err := a.request(ctx, t, h.MethodOrDefault(), user, pass, data, nil); err != nil && ctx.Err() == nil && !interrupted(err) {
		a.c.alert(hookAlertType(err), t.Clean(), a.c.failureDetail("hook", t.Clean(), err))
	}
}

// toolCall requests the toolHook; its JSON answer is the tool output
// (http-requestor.js returns an object body for llm:tool-call).
func (a *httpApp) toolCall(ctx context.Context, h *verbs.Hook, data map[string]any) (json.RawMessage, bool) {
	c := a.c
	t, err := fragment.Resolve(c.opts.app, h.URL)
	if err != nil {
		c.alert(AlertInvalidAppPayload, fragment.Redact(h.URL), fmt.Sprintf("hook %q: %v", fragment.Redact(h.URL), err))
		return nil, false
	}
	user, pass := a.credentials(t, h)
	resp, err := a.request(ctx, t, h.MethodOrDefault(), user, pass, data, nil)
	if err != nil {
		if ctx.Err() == nil && !interrupted(err) {
			c.alert(hookAlertType(err), t.Clean(), c.failureDetail("tool hook", t.Clean(), err))
		}
		return nil, false
	}
	body := bytes.TrimSpace(resp.Body)
	if len(body) == 0 || !json.Valid(body) {
		return nil, false
	}
	return body, true
}

// credentials are a hook's own, or the application's toward its own host.
func (a *httpApp) credentials(t fragment.Target, h *verbs.Hook) (string, string) {
	if h.Username == "" && t.URL.Host == a.c.opts.app.URL.Host {
		return a.c.opts.Username, a.c.opts.Password
	}
	return h.Username, h.Password
}
