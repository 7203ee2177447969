package callctl

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"syscall"
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
// WebhookErrorReturn (docs/call-control.md §6); what its answer holds is judged by
// the call (startWith).
func (a *httpApp) start(ctx context.Context) (answer, bool) {
	c := a.c
	resp, err := a.request(ctx, c.opts.app, c.opts.Method, c.opts.Username, c.opts.Password, c.callHookPayload(), acceptVerbs)
	if err != nil && ctx.Err() != nil {
		c.endCanceled() // stopped, not a hook failure: no alert
		return answer{}, false
	}
	if err != nil && interrupted(err) {
		// Cut short on the wall clock: the call ended (the caller hung up), or a
		// redirect waits for execute to move the call.
		return answer{}, !c.ended
	}
	if err != nil && !rejectedVerbs(err) {
		c.alert(hookAlertType(err), c.opts.app.Clean(), c.failureDetail("call hook", c.opts.app.Clean(), err))
		c.end(StatusFailed, ReasonCallHookFailed, c.opts.WebhookErrorReturn)
		return answer{}, false
	}
	ans := c.unquoted(responseAnswer(resp), fmt.Sprintf("a %d answer", resp.Status))
	ans.url = c.opts.app.Clean()
	return ans, true
}

func (a *httpApp) hook(ctx context.Context, _ string, h *verbs.Hook, payload map[string]any) (answer, bool) {
	c := a.c
	t, err := fragment.Resolve(c.opts.app, h.URL)
	if err != nil {
		c.alert(AlertInvalidAppPayload, fragment.Redact(h.URL), fmt.Sprintf("hook %q: %v", fragment.Redact(h.URL), err))
		return answer{}, false
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
		return answer{}, false
	}
	ans := c.unquoted(responseAnswer(resp), fmt.Sprintf("a %d answer", resp.Status))
	ans.url = t.Clean()
	return ans, true
}

// request sends one hook with its retries, recording every attempt. accept, when
// set, checks a successful answer's body (acceptVerbs).
func (a *httpApp) request(ctx context.Context, t fragment.Target, method, user, pass string, payload map[string]any,
	accept func(int, http.Header, []byte) error) (*transport.HookResponse, error) {
	c := a.c
	// Every payload goes out as jambonz's requestors write it (snake_cased keys).
	payload = wirePayload(c.getPayload(method, t, payload))
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

// acceptVerbs makes a successful answer whose JSON body does not parse an
// unparseable response, which rp=all retries (docs/call-control.md §1), as jambonz's
// HTTP requestor retries a body.json() that throws. What the JSON holds is judged
// after the retries (responseAnswer), as jambonz judges it.
func acceptVerbs(status int, header http.Header, body []byte) error {
	if status == http.StatusNoContent || len(bytes.TrimSpace(body)) == 0 || !isJSONContent(header.Get("Content-Type")) {
		return nil
	}
	if !json.Valid(body) {
		return fmt.Errorf("%w: the body is not JSON", verbs.ErrInvalidPayload)
	}
	return nil
}

// rejectedVerbs reports whether a hook failed only because acceptVerbs rejected its
// last answer: the retries, if any, are spent, and the answer is an invalid payload
// (its verbs are decoded again for the error).
func rejectedVerbs(err error) bool {
	var he *transport.HookError
	return errors.As(err, &he) && he.Class == retry.Unparseable && errors.Is(he.Err, transport.ErrBodyRejected)
}

// answer is what an application answered a hook with, judged as jambonz judges it
// (lib/utils/http-requestor.js, ws-requestor.js and the code that reads the answer):
// verbs when it is a JSON array whose verbs validate; err when it does not parse or
// its verbs do not validate; notArray, saying what it was, for anything else: no
// body, a 204, a body that is not application/json, JSON that is not an array.
type answer struct {
	verbs []verbs.Verb
	err   error
	// empty: no verbs given, the usual way (a 204, no body, an ack without data).
	// notArray says what was given instead of an array (an HTML page, JSON sent as
	// text/plain, a JSON object): jambonz reads no verbs from it either.
	empty    bool
	notArray string
	url      string // the hook answered, for alerts and warnings
}

// isArray reports whether the answer is a JSON array of valid verbs (maybe empty).
func (a answer) isArray() bool { return a.err == nil && !a.empty && a.notArray == "" }

// replaces reports whether the answer's verbs replace the remaining ones: a valid,
// non-empty array, as jambonz's performAction takes it.
func (a answer) replaces() bool { return a.isArray() && len(a.verbs) > 0 }

// responseAnswer judges an HTTP answer. jambonz reads a body as JSON only when its
// Content-Type includes application/json; anything else, a 204 and an empty body
// are no application to it ("").
func responseAnswer(resp *transport.HookResponse) answer {
	ct := resp.Header.Get("Content-Type")
	switch {
	case resp.Status == http.StatusNoContent, len(bytes.TrimSpace(resp.Body)) == 0:
		return answer{empty: true}
	case !isJSONContent(ct):
		return answer{notArray: notJSONVerbs(resp.Status, ct, resp.Body).Error()}
	}
	return dataAnswer(resp.Body)
}

// dataAnswer judges JSON: an HTTP body read as JSON, an ack's data.
func dataAnswer(data []byte) answer {
	if len(bytes.TrimSpace(data)) == 0 {
		return answer{empty: true}
	}
	// Only JSON's own whitespace (RFC 8259 §2), as JSON.parse and json.Valid read
	// it: "0\v" is not JSON, and acceptVerbs refuses it as such.
	trimmed := bytes.Trim(data, " \t\n\r")
	if trimmed[0] != '[' && json.Valid(trimmed) {
		return answer{notArray: "JSON " + bodyStart(trimmed)}
	}
	vs, err := verbs.Decode(trimmed)
	if err != nil {
		return answer{err: err}
	}
	return answer{verbs: vs}
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
	return fmt.Errorf("a %d answer with %s, body %s%s", status, what, bodyStart(body), hint)
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

// isJSONContent reports whether jambonz reads a body of this Content-Type as JSON:
// when the header includes application/json (lib/utils/http-requestor.js).
func isJSONContent(contentType string) bool {
	return strings.Contains(contentType, "application/json")
}

// getPayload is what a hook of method to t carries of payload: all of it on a POST;
// nothing on a GET, as jambonz's http-requestor.js sends neither a body nor a query
// on a GET (only the URL's own query), which leaves the application knowing nothing
// of the call: a compat warning, once per URL.
func (c *callRun) getPayload(method string, t fragment.Target, payload map[string]any) map[string]any {
	if !strings.EqualFold(method, http.MethodGet) {
		return payload
	}
	c.compat(CompatGetHookEmpty, "%s is requested with GET: jambonz sends no payload on a GET, neither body nor query (only the URL's own query), so the application learns nothing of the call from it", t.Clean())
	return nil
}

// notify sends a status notification to the status hook, if there is one. Its
// failure is alerted and changes nothing else.
func (a *httpApp) notify(ctx context.Context, payload map[string]any) {
	c := a.c
	if c.opts.statusURL == nil {
		return
	}
	if c.opts.statusURL.Policy.Transport == fragment.WebSocket {
		// jambonz opens a new WebSocket per status change and sends the status as
		// session:new (lib/utils/http-requestor.js), which would start a new session
		// in every official SDK: not followed (docs/compatibility.md §7).
		c.compat(CompatStatusHookOverWebSocket, "the status hook %s is a WebSocket URL: jambonz opens a new socket for each status change and sends the status as session:new; Switchboard sends nothing there", c.opts.statusURL.Clean())
		return
	}
	if c.opts.StatusNotifier != nil {
		// The notifier needs the call's fields to file the notification; it sends
		// none on a GET either (StatusNotifier).
		c.getPayload(c.opts.StatusHookMethod, *c.opts.statusURL, payload)
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

func (a *httpApp) release(context.Context) {}

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
func (a *httpApp) toolCall(ctx context.Context, h *verbs.Hook, data map[string]any) (json.RawMessage, bool, map[string]any) {
	c := a.c
	t, err := fragment.Resolve(c.opts.app, h.URL)
	if err != nil {
		c.alert(AlertInvalidAppPayload, fragment.Redact(h.URL), fmt.Sprintf("hook %q: %v", fragment.Redact(h.URL), err))
		return nil, false, map[string]any{}
	}
	user, pass := a.credentials(t, h)
	resp, err := a.request(ctx, t, h.MethodOrDefault(), user, pass, data, nil)
	if err != nil {
		if ctx.Err() != nil || interrupted(err) {
			return nil, false, nil
		}
		c.alert(hookAlertType(err), t.Clean(), c.failureDetail("tool hook", t.Clean(), err))
		return nil, false, nodeErrorFields(err, t)
	}
	// http-requestor.js reads the body only when its Content-Type is JSON, else ''; and
	// lib/tasks/llm/index.js sendToolHook then sets tool_response.type on anything
	// that is not an object (a string, a number, null), which throws a TypeError in
	// the strict-mode class: the llm verb ends as for a failed request.
	body := bytes.TrimSpace(resp.Body)
	var v any
	if resp.Status == http.StatusNoContent || !isJSONContent(resp.Header.Get("Content-Type")) || json.Unmarshal(body, &v) != nil {
		return nil, false, map[string]any{}
	}
	switch v.(type) {
	case map[string]any, []any:
		return body, true, nil
	}
	return nil, false, map[string]any{}
}

// nodeErrorFields are the enumerable own properties of the error jambonz's HTTP
// requestor throws for a failed request, snake-cased as performAction's payload is
// (lib/utils/snakecase-keys.js): an HTTPResponseError's statusCode
// (lib/utils/error.js); Node's ECONNREFUSED error's errno, code, syscall, address
// and port; undici's HeadersTimeoutError's name and code. Other errors have none
// that Switchboard can tell.
func nodeErrorFields(err error, t fragment.Target) map[string]any {
	var he *transport.HookError
	if !errors.As(err, &he) {
		return map[string]any{}
	}
	switch {
	case he.Status != 0:
		return map[string]any{"status_code": he.Status}
	case he.Class == retry.ResponseTimeout:
		return map[string]any{"name": "HeadersTimeoutError", "code": "UND_ERR_HEADERS_TIMEOUT"}
	case he.Class == retry.Connect && errors.Is(err, syscall.ECONNREFUSED):
		fields := map[string]any{"errno": -111, "code": "ECONNREFUSED", "syscall": "connect", "address": t.URL.Hostname()}
		if port, perr := strconv.Atoi(t.URL.Port()); perr == nil {
			fields["port"] = port
		}
		return fields
	}
	return map[string]any{}
}

// credentials are a hook's own, or the application's toward its own host.
func (a *httpApp) credentials(t fragment.Target, h *verbs.Hook) (string, string) {
	if h.Username == "" && t.URL.Host == a.c.opts.app.URL.Host {
		return a.c.opts.Username, a.c.opts.Password
	}
	return h.Username, h.Password
}
