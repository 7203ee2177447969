package callctl

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/rs/zerolog"

	"github.com/switchboard-voice/switchboard/callctl/internal/wssession"
	"github.com/switchboard-voice/switchboard/callctl/verbs"
	"github.com/switchboard-voice/switchboard/fragment"
)

// ReasonAPIHangup is the call.end reason of a call hung up by a Control.
const ReasonAPIHangup = "api-hangup"

// ErrAPIHangup is the cause to cancel a call's context with (context.WithCancelCause)
// when the call alone is hung up through an API: the call ends with ReasonAPIHangup,
// and the sessions its dialed legs were given by a child_call_hook go on, as jambonz's
// adulted legs are calls of their own (lib/session/adulting-call-session.js). Any
// other cause ends them too.
var ErrAPIHangup = errors.New(ReasonAPIHangup)

// ErrNoAnswer, as the cause of canceling a call's context
// (context.WithCancelCause), ends a call not yet answered with status no-answer
// (SIP 487, its text the reason), as jambonz's live call control call_status
// no-answer cancels an unanswered call. An answered call ends as any canceled one.
var ErrNoAnswer = errors.New("api-no-answer")

// Control is a command to a live call from outside it (a node's REST API, modelled on
// jambonz's live call control). Exactly one field is set.
type Control struct {
	// Redirect is an application URL: http(s) or ws(s), absolute or relative to the
	// current application's URL, with an optional retry fragment. Its verbs replace
	// the call's remaining verbs: an http(s) URL is requested like an action hook; a
	// WebSocket application moving within itself (relative, or its own scheme and
	// host) is sent session:redirect on its session; another ws(s) URL gets a new
	// session (session:new).
	Redirect string
	// Hangup ends the call with ReasonAPIHangup.
	Hangup bool
	// Mute mutes (true) or unmutes (false) the caller. Media is simulated, so this
	// only changes the call's muted state, which is logged.
	Mute *bool
	// Update names another field of jambonz's live call control (whisper,
	// listen_status, record ...): media the call simulates, so it is recorded, and
	// a whisper outside a dial or listen is warned as jambonz ignores it.
	Update string
	// ChildCallHook moves the dialed leg of a dial in progress to another application
	// (jambonz's child_call_hook): its URL is requested as session:redirect with the
	// leg's call info, the leg leaves the call with the verbs it returns
	// (session:adulting) and the dial ends. Without a dial in progress nothing
	// happens, as in jambonz.
	ChildCallHook string
	// StatusHook, with Redirect, is the status hook from then on, once the
	// redirect took effect: its URL resolves against the new application's (an
	// HTTP application's status hook, Options.StatusHookURL). Default: the call
	// keeps the status hook it had.
	StatusHook *StatusHook
}

// StatusHook is a status hook a redirect moves the call's notifications to.
type StatusHook struct {
	URL, Method, Username, Password string
	// Notifier, when set, takes over its notifications (Options.StatusNotifier).
	Notifier StatusNotifier
}

// Validate checks a Control before it is sent to a call.
func (ctl Control) Validate() error {
	set := 0
	for _, given := range []bool{ctl.Redirect != "", ctl.Hangup, ctl.Mute != nil, ctl.Update != "", ctl.ChildCallHook != ""} {
		if given {
			set++
		}
	}
	if set != 1 {
		return fmt.Errorf("%w: a control sets exactly one of Redirect, Hangup, Mute, Update, ChildCallHook", ErrInvalidOptions)
	}
	if ctl.StatusHook != nil && ctl.Redirect == "" {
		return fmt.Errorf("%w: a control's StatusHook goes with Redirect", ErrInvalidOptions)
	}
	return nil
}

// controlInbox holds controls taken off the channel while the call waited.
type controlInbox struct {
	mu    sync.Mutex
	queue []Control
}

func (in *controlInbox) pending() bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	return len(in.queue) > 0
}

// putBack returns controls taken off the inbox to its front, for later.
func (in *controlInbox) putBack(ctls []Control) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.queue = append(append([]Control(nil), ctls...), in.queue...)
}

func (in *controlInbox) take() []Control {
	in.mu.Lock()
	defer in.mu.Unlock()
	q := in.queue
	in.queue = nil
	return q
}

// waitContext returns a context canceled when a control arrives on ch (which is then
// kept in the inbox), so that a wait for the application ends early. stop releases
// the watcher; with a nil ch it does nothing.
func (in *controlInbox) waitContext(ctx context.Context, ch <-chan Control) (context.Context, func()) {
	if ch == nil {
		return ctx, func() {}
	}
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		select {
		case ctl := <-ch:
			in.mu.Lock()
			in.queue = append(in.queue, ctl)
			in.mu.Unlock()
			cancel()
		case <-wctx.Done():
		}
	}()
	return wctx, func() { cancel(); <-done }
}

// applyControls applies the controls that arrived, in order.
func (c *callRun) applyControls(ctx context.Context) {
	if c.opts.Control == nil {
		return
	}
	pending := c.controls.take()
	for {
		select {
		case ctl := <-c.opts.Control:
			pending = append(pending, ctl)
			continue
		default:
		}
		break
	}
	for _, ctl := range pending {
		if c.ended {
			return
		}
		c.applyControl(ctx, ctl)
	}
}

func (c *callRun) applyControl(ctx context.Context, ctl Control) {
	switch {
	case ctl.Hangup:
		c.log(zerolog.InfoLevel).Msg("hung up by live call control")
		c.hangup(ReasonAPIHangup)
	case ctl.Mute != nil:
		c.muted = *ctl.Mute
		c.log(zerolog.InfoLevel).Bool("muted", c.muted).Msg("mute changed by live call control")
	case ctl.Update == "whisper":
		c.whisper()
	case ctl.Update != "":
		c.log(zerolog.InfoLevel).Str("update", ctl.Update).Msg("live call control (media is simulated)")
	case ctl.Redirect != "":
		if ctl.StatusHook != nil {
			// jambonz checks that call_status_hook comes with call_hook, then never
			// reads it (lib/session/call-session.js updateCall, _lccCallHook).
			c.compat(CompatIgnoredProperty, "call_status_hook of live call control: jambonz ignores it; status notifications keep going where they went")
		}
		c.redirect(ctx, ctl.Redirect)
	case ctl.ChildCallHook != "":
		c.childCallHook(ctx, ctl.ChildCallHook, true)
	}
}

// childCallHook moves the dialed leg to another application (call-session.js
// _lccCallHook with child_call_hook): the hook is requested on the call's own
// application as session:redirect with the leg's call info, and the verbs it returns
// run in the leg's own session (adult.go), while the dial ends (its actionHook
// follows, dial.go).
//
// With no dial bridged, _lccCallHook requests nothing (it reads the leg from the
// current task's sd) and, given no call_hook (alone), kills the verb playing, as it
// does after an adulting that left the call no verbs; with no verb playing it throws
// reading sd of null, and nothing happens.
func (c *callRun) childCallHook(ctx context.Context, url string, alone bool) {
	d := c.dialing
	if d == nil || d.adulted {
		if alone && c.current != nil {
			c.compat(CompatCommandWithoutEffect, "child_call_hook while no dial is bridged: jambonz requests nothing, and kills the verb playing (%s)", c.current.Name())
			c.cut = true
			return
		}
		c.log(zerolog.InfoLevel).Msg("child_call_hook while no dial is bridged: jambonz ignores it")
		return
	}
	vs, _, ok := c.hookVerbs(ctx, wssession.MsgSessionRedirect, &verbs.Hook{URL: url}, d.leg.fields())
	if !ok || c.ended {
		return
	}
	d.adulted = true
	now := c.elapsed()
	c.adult(ctx, *d.leg, vs, d.out.Callee, max(d.end-now, 0), now-d.answered)
	c.log(zerolog.InfoLevel).Int("verbs", len(vs)).Msg("the dialed leg left the call for a session of its own with the child_call_hook's verbs")
	c.cut = true
}

// moveStatusHook sends the call's status notifications to h from now on; a URL
// that does not resolve against the application is alerted and changes nothing.
func (c *callRun) moveStatusHook(h StatusHook) {
	t, err := fragment.Resolve(c.opts.app, h.URL)
	if err != nil {
		c.alert(AlertWebhookFailure, h.URL, fmt.Sprintf("redirect: status hook: %v", err))
		return
	}
	c.opts.statusURL = &t
	c.opts.StatusHookURL, c.opts.StatusHookMethod, c.opts.StatusHookUsername, c.opts.StatusHookPassword = h.URL, h.Method, h.Username, h.Password
	c.opts.StatusNotifier = h.Notifier
}

// redirect moves the call to another application as jambonz's live call control
// does (lib/session/call-session.js _lccCallHook; docs/compatibility.md §6), for a
// node's API and the redirect command's call_hook. A WebSocket application gets
// session:redirect on its session for any ws(s) or relative URL, whatever its host,
// with the URL as given as its hook; an absolute http(s) URL is requested as a
// webhook and the call's application becomes HTTP there (the WebSocket is closed with
// 1000, and, as in jambonz, no status notification follows). An HTTP application
// requests the URL (relative ones against its own) and keeps its base; a ws(s) URL
// opens a new WebSocket application there (session:new), its status notifications
// staying with the status hook. A non-empty array of verbs in the answer replaces the
// remaining verbs, an empty one clears them; no verbs stop the verb playing and leave
// the rest. When the application cannot be reached, the failure is alerted and the
// call goes on; a new WebSocket that cannot be opened fails the call, as an initial
// connection would (docs/call-control.md §6). It reports whether the call moved.
func (c *callRun) redirect(ctx context.Context, raw string) bool {
	t, err := fragment.Resolve(c.opts.app, raw)
	if err == nil && t.Policy.Transport == fragment.HTTP && c.opts.Hooks == nil {
		err = fmt.Errorf("%q: no HTTP hook client (Options.Hooks) to request it", raw)
	}
	if err != nil {
		c.alert(AlertWebhookFailure, fragment.Redact(raw), fmt.Sprintf("redirect: %v", err))
		return false
	}
	var ans answer
	var ok bool
	switch app := c.app.(type) {
	case *wsApp:
		if t.Policy.Transport == fragment.WebSocket || !isAbsolute(raw) {
			if app.s.Ended() {
				c.alert(AlertWebhookFailure, fragment.Redact(raw), "redirect: the application closed its WebSocket: jambonz sends nothing more on it")
				return false
			}
			ans, ok = app.hook(ctx, wssession.MsgSessionRedirect, &verbs.Hook{URL: raw}, c.info.fields())
			break
		}
		if ans, ok = (&httpApp{c: c}).hook(ctx, wssession.MsgSessionRedirect, &verbs.Hook{URL: raw}, c.info.fields()); !ok {
			return false // alerted; the call goes on with the application it had
		}
		// The WebSocket requestor closes and hands over to an HTTP one; the
		// notifier was that requestor, now closed (lib/utils/ws-requestor.js).
		c.keepNotifier(app)
		app.s.Close(1000, "call redirected")
		if h := c.opts.statusURL; h == nil || h.Policy.Transport != fragment.HTTP {
			c.compat(CompatStatusToOldApp, "the call moved from a WebSocket application to the HTTP application %s: jambonz sends no more call status notifications (they went over the WebSocket, now closed)", t.Clean())
		}
		c.opts.app, c.app = t, newHTTPApp(c)
	case *httpApp:
		if t.Policy.Transport == fragment.HTTP {
			// Requested where it points; the application's base stays (no handover).
			if ans, ok = app.hook(ctx, wssession.MsgSessionRedirect, &verbs.Hook{URL: raw}, c.info.fields()); !ok {
				return false
			}
			break
		}
		oldTarget := c.opts.app
		c.opts.app = t
		next := newWSApp(c)
		if ans, ok = next.start(ctx); !ok {
			// start alerted and ended the call: jambonz fails a call whose
			// WebSocket cannot be opened.
			if !c.ended {
				c.opts.app = oldTarget
			}
			return false
		}
		c.keepNotifier(app)
		c.app = next
	}
	if !ok {
		return false // when not ok, hook alerted (unless the call ended meanwhile)
	}
	switch {
	case ans.isArray():
		c.queue = ans.verbs
	case ans.err != nil:
		c.compat(CompatInvalidCommand, "redirect: %s answered verbs that do not validate (%v): jambonz ignores them and changes nothing", ans.url, ans.err)
	case ans.notArray != "":
		c.compat(CompatActionHookNotVerbs, "redirect: %s answered %s: jambonz reads no verbs from it; it stops the verb playing and keeps the rest", ans.url, ans.notArray)
	}
	return true
}

// whisper applies a whisper (live call control or the command): jambonz plays it to
// a dial's or a listen's parties and ignores it otherwise (_lccWhisper).
func (c *callRun) whisper() {
	if c.current != nil && (c.current.Name() == "dial" || c.current.Name() == "listen") {
		c.log(zerolog.InfoLevel).Msg("whisper to the parties of the " + c.current.Name() + " (media is simulated)")
		return
	}
	c.compat(CompatCommandWithoutEffect, "whisper: jambonz whispers only while a dial or listen is in progress, and ignores it otherwise")
}

// keepNotifier keeps app as where the call's status notifications go, when the call
// moves to another application: jambonz's notifier is the application's first
// requestor (lib/middleware.js), which a handover does not change.
func (c *callRun) keepNotifier(app application) {
	if c.notifier == nil {
		c.notifier = app
	}
}

// statusApp is where the call's status notifications go: its first application, or
// the one a handover kept (keepNotifier).
func (c *callRun) statusApp() application {
	if c.notifier != nil {
		return c.notifier
	}
	return c.app
}

// isAbsolute reports whether raw is an absolute URL of a scheme jambonz requests
// (lib/utils/base-requestor.js _isAbsoluteUrl; the scheme's case is not told apart).
func isAbsolute(raw string) bool {
	for _, p := range []string{"http://", "https://", "ws://", "wss://"} {
		if len(raw) >= len(p) && strings.EqualFold(raw[:len(p)], p) {
			return true
		}
	}
	return false
}

// otherApp reports whether t is another application than the current one: its scheme
// or host differs.
func (c *callRun) otherApp(t fragment.Target) bool {
	return t.URL.Host != c.opts.app.URL.Host || t.URL.Scheme != c.opts.app.URL.Scheme
}
