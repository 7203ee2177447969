package callctl

import (
	"context"

	"github.com/switchboard-voice/switchboard/fragment"

	"github.com/switchboard-voice/switchboard/callctl/internal/wssession"
	"github.com/switchboard-voice/switchboard/callctl/verbs"
)

// What the call does with an application's answers, as jambonz's code does it
// (docs/compatibility.md §3).

// startVerbs returns the verbs a call starts with, from its call hook's answer (or
// the session:new ack's). An inbound call starts as lib/middleware.js's
// invokeWebCallback starts it: anything but a non-empty array of valid verbs, a 204
// or an ack without verbs among them, rejects the call with WebhookErrorReturn and an
// invalid-app-payload alert (a WebSocket is closed with 1001). An outbound call's
// call hook comes once the call was answered (lib/tasks/rest_dial.js): what is not
// verbs there runs no verbs, with no alert.
func (c *callRun) startVerbs(ans answer) ([]verbs.Verb, bool) {
	if c.info.Direction == "outbound" {
		switch {
		case ans.err != nil:
			c.compat(CompatCallHookIgnored, "the call hook %s answered verbs that do not validate (%v): jambonz logs it, raises no alert and runs no verbs", ans.url, ans.err)
		case ans.notArray != "":
			c.compat(CompatCallHookIgnored, "the call hook %s answered %s: jambonz reads no verbs from it, raises no alert and runs none", ans.url, ans.notArray)
		}
		return ans.verbs, true
	}
	var why string
	switch {
	case ans.err != nil:
		why = ans.err.Error()
	case ans.empty:
		why = "malformed jambonz payload: must be array"
	case ans.notArray != "":
		why = "malformed jambonz payload: must be array (" + ans.notArray + ")"
	case len(ans.verbs) == 0:
		why = "no application provided"
	default:
		return ans.verbs, true
	}
	c.alert(AlertInvalidAppPayload, ans.url, "call hook "+ans.url+": "+why)
	c.end(StatusFailed, ReasonInvalidPayload, c.opts.WebhookErrorReturn)
	if ws, ok := c.app.(*wsApp); ok {
		// docs/call-control.md §4: the initial session:new failed.
		ws.s.Close(1001, "session:new failed")
	}
	return nil, false
}

// takeAnswer applies the answer to an action hook of v (Task.performAction in
// lib/tasks/task.js): a non-empty array of valid verbs replaces the remaining ones;
// an empty array, a 204 or an ack without verbs leaves them. Anything else leaves
// them too, silently in jambonz: a compat warning here. Verbs that do not validate
// are an invalid-app-payload alert; the gather verb also tells a WebSocket
// application with jambonz:error, as its _resolve does.
func (c *callRun) takeAnswer(ctx context.Context, v verbs.Verb, ans answer) {
	switch {
	case ans.err != nil:
		c.alert(AlertInvalidAppPayload, ans.url, "actionHook returned invalid verb syntax: "+ans.err.Error())
		if ws, ok := c.app.(*wsApp); ok && v != nil && v.Name() == "gather" {
			data := map[string]any{"msg": "invalid actionHook response", "details": ans.err.Error(), "verb": v.Name()}
			if id := v.ID(); id != "" {
				data["id"] = id
			}
			ws.s.Notify(ctx, wssession.MsgJambonzError, data)
		}
	case ans.notArray != "":
		c.compat(CompatActionHookNotVerbs, "%s answered %s: jambonz reads no verbs from it and goes on with the verbs it has", ans.url, ans.notArray)
	case ans.replaces():
		c.queue = ans.verbs
	}
}

// hookVerbs requests a hook and returns its answer as verbs: those of a valid array
// (replace when there are any), none otherwise. Verbs that do not validate are an
// invalid-app-payload alert, and a body that is not an array a compat warning, as
// takeAnswer says; ok false means the request failed (already alerted).
func (c *callRun) hookVerbs(ctx context.Context, typ string, h *verbs.Hook, payload map[string]any) (vs []verbs.Verb, replace, ok bool) {
	ans, ok := c.app.hook(ctx, typ, h, payload)
	if !ok {
		return nil, false, false
	}
	switch {
	case ans.err != nil:
		c.alert(AlertInvalidAppPayload, ans.url, "hook returned invalid verb syntax: "+ans.err.Error())
		return nil, false, true
	case ans.notArray != "":
		c.compat(CompatActionHookNotVerbs, "%s answered %s: jambonz reads no verbs from it and goes on with the verbs it has", ans.url, ans.notArray)
	}
	return ans.verbs, ans.replaces(), true
}

// gatherAction requests a gather's action hook as jambonz's gather does
// (lib/tasks/gather.js _resolve): when the hook fails or answers verbs that do not
// validate, the gather raises an invalid-app-payload alert, tells a WebSocket
// application with jambonz:error and sends a call:status carrying error and reason;
// the call goes on.
func (c *callRun) gatherAction(ctx context.Context, g *verbs.Gather, extra map[string]any) {
	if g.ActionHook == nil || c.ended || c.cut {
		return
	}
	payload := c.payload(extra)
	if id := g.ID(); id != "" {
		payload["verb_id"] = id
	}
	alerts := len(c.result.Alerts)
	ans, ok := c.app.hook(ctx, wssession.MsgVerbHook, g.ActionHook, payload)
	switch {
	case ok:
		c.takeAnswer(ctx, g, ans)
		if ans.err != nil {
			c.gatherHookFailed(ctx, ans.err.Error())
		}
	case len(c.result.Alerts) > alerts && !c.ended:
		// The hook failed (alerted by the app); not when it was cut short.
		why := c.result.Alerts[len(c.result.Alerts)-1].Detail
		c.alert(AlertInvalidAppPayload, fragment.Redact(g.ActionHook.URL), "actionHook returned invalid verb syntax: "+why)
		if ws, isWS := c.app.(*wsApp); isWS {
			data := map[string]any{"msg": "invalid actionHook response", "details": why, "verb": g.Name()}
			if id := g.ID(); id != "" {
				data["id"] = id
			}
			ws.s.Notify(ctx, wssession.MsgJambonzError, data)
		}
		c.gatherHookFailed(ctx, why)
	}
	c.checkDeadline()
}

// gatherHookFailed sends the call:status jambonz's gather sends after a failed
// action hook: the call's fields with error and reason.
func (c *callRun) gatherHookFailed(ctx context.Context, why string) {
	fields := c.info.fields()
	fields["error"], fields["reason"] = "invalid actionHook response", why
	c.statusApp().notify(ctx, fields)
}
