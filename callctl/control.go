package callctl

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/rs/zerolog"

	"github.com/switchboard-voice/switchboard/callctl/internal/wssession"
	"github.com/switchboard-voice/switchboard/callctl/verbs"
	"github.com/switchboard-voice/switchboard/fragment"
)

// ReasonAPIHangup is the call.end reason of a call hung up by a Control.
const ReasonAPIHangup = "api-hangup"

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
	for _, given := range []bool{ctl.Redirect != "", ctl.Hangup, ctl.Mute != nil, ctl.ChildCallHook != ""} {
		if given {
			set++
		}
	}
	if set != 1 {
		return fmt.Errorf("%w: a control sets exactly one of Redirect, Hangup, Mute, ChildCallHook", ErrInvalidOptions)
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
	case ctl.Redirect != "":
		if c.redirect(ctx, ctl.Redirect) && ctl.StatusHook != nil {
			c.moveStatusHook(*ctl.StatusHook)
		}
	case ctl.ChildCallHook != "":
		c.childCallHook(ctx, ctl.ChildCallHook)
	}
}

// childCallHook moves the dialed leg to another application (call-session.js
// _lccCallHook with child_call_hook): the hook is requested on the call's own
// application as session:redirect with the leg's call info, and the verbs it returns
// run in the leg's own session (adult.go), while the dial ends (its actionHook
// follows, dial.go).
func (c *callRun) childCallHook(ctx context.Context, url string) {
	d := c.dialing
	if d == nil || d.adulted {
		c.log(zerolog.InfoLevel).Msg("child_call_hook while no dial is bridged: jambonz ignores it")
		return
	}
	vs, _, ok := c.app.hook(ctx, wssession.MsgSessionRedirect, &verbs.Hook{URL: url}, d.leg.fields())
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

// redirect moves the call to another application, as jambonz's live call control
// does: an http(s) URL is requested like a call hook and its verbs replace the
// remaining ones. A WebSocket application asked to move within itself (a relative
// URL, or a ws(s) URL of its own scheme and host) gets session:redirect on the session
// it has, with the URL as its hook and the call's details as its data, and the ack's
// verbs replace the remaining ones. Any other ws(s) URL opens a new WebSocket session
// there (session:new) whose verbs replace them. Either way later relative hooks
// resolve against the new application and use its transport; a WebSocket session
// being left is closed with 1000. When the new application cannot be reached, or
// session:redirect is not acked, the failure is alerted and the call goes on with
// the application and verbs it had; a new WebSocket that cannot be opened fails the
// call, as an initial connection would (docs/call-control.md §6). It reports
// whether the call moved.
func (c *callRun) redirect(ctx context.Context, raw string) bool {
	t, err := fragment.Resolve(c.opts.app, raw)
	if err == nil && t.Policy.Transport == fragment.HTTP && c.opts.Hooks == nil {
		err = fmt.Errorf("%q: no HTTP hook client (Options.Hooks) to request it", raw)
	}
	if err != nil {
		c.alert(AlertWebhookFailure, fragment.Redact(raw), fmt.Sprintf("redirect: %v", err))
		return false
	}
	if ws, isWS := c.app.(*wsApp); isWS && !ws.s.Ended() && !c.otherApp(t) {
		// The application keeps its session: it learns of the move from the message,
		// as from jambonz, and not from a new connection (hook drops the fragment).
		vs, _, ok := ws.hook(ctx, wssession.MsgSessionRedirect, &verbs.Hook{URL: raw}, c.info.fields())
		if ok {
			c.queue = vs
		}
		return ok // when not ok, hook alerted (unless the call ended meanwhile)
	}
	old := c.app
	var vs []verbs.Verb
	if t.Policy.Transport == fragment.HTTP {
		var ok bool
		if vs, _, ok = (&httpApp{c: c}).hook(ctx, "redirect", &verbs.Hook{URL: raw}, c.info.fields()); !ok {
			return false // alerted; the call goes on with the application it had
		}
		c.opts.app, c.app = t, newHTTPApp(c)
	} else {
		oldTarget := c.opts.app
		c.opts.app = t
		next := newWSApp(c)
		var ok bool
		if vs, ok = next.start(ctx); !ok {
			// start alerted and ended the call: jambonz fails a call whose
			// WebSocket cannot be opened.
			if !c.ended {
				c.opts.app = oldTarget
			}
			return false
		}
		c.app = next
	}
	if ws, isWS := old.(*wsApp); isWS && ws != c.app {
		ws.s.Close(1000, "call redirected")
	}
	c.queue = vs
	return true
}

// movesToAnotherApp reports whether a redirect verb's hook names another application:
// an absolute URL whose scheme or host differs from the current application's.
func (c *callRun) movesToAnotherApp(h *verbs.Hook) bool {
	if h == nil {
		return false
	}
	t, err := fragment.Resolve(c.opts.app, h.URL)
	if err != nil {
		return false
	}
	return c.otherApp(t)
}

// otherApp reports whether t is another application than the current one: its scheme
// or host differs.
func (c *callRun) otherApp(t fragment.Target) bool {
	return t.URL.Host != c.opts.app.URL.Host || t.URL.Scheme != c.opts.app.URL.Scheme
}
