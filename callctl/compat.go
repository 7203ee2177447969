package callctl

import (
	"fmt"

	"github.com/rs/zerolog"
)

// CompatRule names a behaviour of jambonz that would silently hurt an application:
// the call does what jambonz does and records a compat warning naming it
// (KindCompat; docs/compatibility.md §2). The rules are a stable contract: scenarios
// name them (expect.compat) and `switchboard test --strict` fails on them.
type CompatRule string

// The compat rules. Each comment says what jambonz does.
const (
	// CompatCommandBeforeAck: a command sent before the session:new ack is lost
	// (jambonz applies it to the empty task list it replaces).
	CompatCommandBeforeAck CompatRule = "command-before-ack"
	// CompatTagCommand: jambonz has no tag command and ignores it; customerData is
	// set by the tag verb or the REST API's tag.
	CompatTagCommand CompatRule = "tag-command"
	// CompatUnknownCommand: a command jambonz does not know is logged and ignored,
	// with no jambonz:error.
	CompatUnknownCommand CompatRule = "unknown-command"
	// CompatIgnoredProperty: a verb property jambonz validates but never acts on.
	CompatIgnoredProperty CompatRule = "ignored-property"
	// CompatActionHookNotVerbs: an action hook answered with something that is not
	// a JSON array (HTML, JSON sent as text/plain, an object): jambonz keeps the
	// verbs it had, silently.
	CompatActionHookNotVerbs CompatRule = "action-hook-not-verbs"
	// CompatGatherDigitsLost: a gather whose digits no rule ends (no numDigits,
	// maxDigits or finishOnKey reached) reports a timeout without them when its
	// timeout passes, unless minDigits were keyed.
	CompatGatherDigitsLost CompatRule = "gather-digits-lost"
	// CompatCallHookIgnored: an outbound (REST) call's call hook answered with
	// something that is not verbs: jambonz logs it, raises no alert and runs no
	// verbs (an HTTP application's call hangs up, a WebSocket one waits).
	CompatCallHookIgnored CompatRule = "call-hook-ignored"
	// CompatInvalidCommand: a command whose data jambonz cannot use (verbs that do
	// not validate, a call_hook without a url): it logs the error and ignores the
	// command, with no jambonz:error.
	CompatInvalidCommand CompatRule = "invalid-command"
	// CompatRedirectCommandIgnored: a redirect command whose data jambonz does not
	// act on (neither verbs, a call_hook, a child_call_hook nor parent_call): the verb
	// playing is stopped and nothing replaces it.
	CompatRedirectCommandIgnored CompatRule = "redirect-command-ignored"
	// CompatCommandWithoutEffect: a command jambonz accepts but that does nothing in
	// the call's state (whisper outside a dial, listen:status outside a listen ...).
	CompatCommandWithoutEffect CompatRule = "command-without-effect"
	// CompatStatusToOldApp: after a redirect verb to another WebSocket application
	// jambonz keeps sending call:status to the application the call left.
	CompatStatusToOldApp CompatRule = "status-to-previous-app"
	// CompatStatusBeforeSession: a REST call's first call:status messages reach a
	// WebSocket application before session:new, without call_sid: the official SDKs
	// drop them.
	CompatStatusBeforeSession CompatRule = "status-before-session"
	// CompatStatusHookOverWebSocket: an HTTP application whose status hook is a
	// ws(s) URL gets a new WebSocket for each status change, the status sent as
	// session:new.
	CompatStatusHookOverWebSocket CompatRule = "ws-status-hook"
	// CompatAnswerIgnored: a hook whose answer jambonz never reads (a dial's
	// dtmfHook, a conference's statusHook, a gather's partialResultHook) answered
	// verbs: jambonz runs none of them.
	CompatAnswerIgnored CompatRule = "answer-ignored"
	// CompatGetHookEmpty: a hook (or status hook) with method GET: jambonz sends it
	// with no payload at all, neither body nor query.
	CompatGetHookEmpty CompatRule = "get-hook-empty"
	// CompatAdultingAckVerbs: the ack of session:adulting carries verbs, which
	// jambonz ignores: an adulted leg runs the child_call_hook's verbs.
	CompatAdultingAckVerbs CompatRule = "adulting-ack-verbs"
	// CompatTimerOverflow: a duration jambonz times with Node's setTimeout (a
	// gather's timeout or interDigitTimeout, a pause, a play's timeoutSecs, a listen's maxLength, a
	// dial's timeout or timeLimit) beyond 2^31-1 ms (about 24.8 days): Node sets
	// the delay to 1 ms, so the timer fires at once.
	CompatTimerOverflow CompatRule = "timer-overflow"
	// CompatRestDialVerb: a rest:dial verb among an application's verbs places no
	// call and requests no call_hook: jambonz's task only drives a call the REST API
	// created, and as a verb it waits until the call ends or is given new verbs.
	CompatRestDialVerb CompatRule = "rest-dial-verb"
)

// compatRules lists every rule, for KnownCompatRule: a rule added above goes here too.
var compatRules = []CompatRule{CompatCommandBeforeAck, CompatTagCommand, CompatUnknownCommand, CompatIgnoredProperty,
	CompatActionHookNotVerbs, CompatGatherDigitsLost, CompatCallHookIgnored, CompatInvalidCommand, CompatRedirectCommandIgnored, CompatCommandWithoutEffect, CompatStatusToOldApp,
	CompatStatusBeforeSession, CompatStatusHookOverWebSocket, CompatAnswerIgnored, CompatGetHookEmpty, CompatAdultingAckVerbs, CompatTimerOverflow, CompatRestDialVerb}

// CompatRules returns every compat rule, in a fresh slice.
func CompatRules() []CompatRule { return append([]CompatRule(nil), compatRules...) }

// Compat is one compat warning of a call (Result.Compat).
type Compat struct {
	Rule CompatRule
	// Detail says what the application did and what jambonz does with it.
	Detail string
}

// compat records a compat warning: once per rule and detail in a call, so that a
// verb repeated in a loop names its jambonz behaviour once. Callers do what jambonz
// does; this only tells the developer.
func (c *callRun) compat(rule CompatRule, format string, args ...any) {
	detail := fmt.Sprintf(format, args...)
	for _, w := range c.result.Compat {
		if w.Rule == rule && w.Detail == detail {
			return
		}
	}
	c.result.Compat = append(c.result.Compat, Compat{Rule: rule, Detail: detail})
	c.record(Event{Kind: KindCompat, Rule: rule, Detail: detail})
	c.log(zerolog.InfoLevel).Str("compat", string(rule)).Msg(detail)
}
