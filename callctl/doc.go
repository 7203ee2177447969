// Package callctl runs one call against a jambonz-style application, over HTTP
// webhooks or a WebSocket, per docs/call-control.md. Run asks the application for
// the call's verbs, runs them with simulated media, calls action hooks, sends status
// notifications, speaks the WebSocket session protocol and applies the "retries ran
// out" outcomes of §6. Every call records a timeline of Events (the
// `simulate --json` contract) and ends with a Result. Run fails only for Options
// that cannot run a call (ErrInvalidOptions, every bad field named); what goes wrong
// during the call is in the Result. When its context ends, the call ends canceled.
//
// Time (§4b). A call runs on its own clock, made when it starts and passed to every
// hook request and WebSocket dial it makes: by default a simulated clock, real
// elapsed time on Options.Clock (network I/O is real) plus simulated time that media
// (say, play, pause, gather timeouts, dial durations) and retry delays add at once,
// so a 30-minute call runs in milliseconds; ack timeouts and the idle limit stay
// real waits. With Options.RealTime the call runs on the wall clock instead, as a
// production feature server would: every wait is real, and is cut short by what the
// call must react to at once (live call control, a command replacing the verbs, the
// caller hanging up, the context's end) (clock.go, wait.go).
//
// WebSocket sessions. session:new waits for its ack; verb:hook and dial:confirm
// too; call:status and verb:status (after config notifyEvents) are fire and
// forget. Live call control moving the call within its WebSocket application (a
// relative URL, or one of the same scheme and host) sends session:redirect on the
// session, which waits for its ack as verb:hook does; another ws(s) URL opens a new
// session there. Commands are applied between verbs or while the call waits: redirect
// replaces the remaining verbs (appends with queueCommand), call:status completed
// hangs up, tag replaces customerData, the other known commands are validated and
// logged. Invalid input (invalid JSON, unknown types, binary or oversized frames,
// invalid verbs) raises invalid-app-payload and is answered with jambonz:error; the
// session goes on. A close with 1000 from the app ends the session gracefully; any
// other end of the connection starts a reconnect episode (transport/wsclient), then
// session:reconnect carrying the original session:new data, and nothing else is
// sent until it is acked. An ack for a request sent before the drop still counts
// when it arrives on the new connection. When the verbs run out the call waits for
// a command until the caller hangs up, the app closes with 1000 or Options.IdleLimit
// passes; the node closes with 1000 at the end, 1001 when session:new failed.
//
// Hooks. Verbs an action hook returns replace the remaining ones; a hook that
// returns none leaves them. A failed action, status or verb hook is alerted and
// the call goes on; a dial whose confirm hook fails ends that dial as failed; a
// failed call hook rejects the call with Options.WebhookErrorReturn.
//
// Scenarios (§9). Options.Script plays the caller (input at each gather, dial
// outcomes, a hangup) and the network: drops of the WebSocket, and network faults
// (latency, jitter, a slow app, refused or reset connections) injected on the node's
// side of every connection the call makes, after the egress checks. The timeline
// shows what the caller entered (caller.input) and the faults (fault); Result.Requests
// keeps what the application received, for scenario expectations.
//
// Where things are: the verb model and its validation in callctl/verbs; scenario
// files and expectations in callctl/scenario; the WebSocket session protocol (its
// state machine, message codec, reconnect episodes, drops) in
// callctl/internal/wssession; the faulty network in callctl/internal/netfault; the
// network (egress HTTP client, hook retries, WebSocket dialing and reconnect
// episodes) in package transport. This package is
// the call: its options, the verbs' execution, the HTTP application, what a
// WebSocket session's messages mean for the call, live call control, the timeline.
// It knows no HTTP server, no storage and no environment variable: everything comes
// in through Options.
package callctl
