// Package scenario reads the scenario files of `switchboard simulate --scenario` and
// `switchboard test` (and the scenario object of a call created through a node's
// API) and checks a finished call against their expectations.
//
// A scenario names the application it runs against (app, status_hook), says what the
// caller and the network do during a simulated call (the input at each gather, the
// outcome of each dial, when the caller hangs up, drops of the WebSocket, a faulty
// network: docs/call-control.md §9) and what must have happened by its end: verbs,
// hooks in order, exactly, or counted, final status and reason, alerts raised or not,
// what the application received (a request's method, payload fields by path, answer
// time) and a bound on every answer. Parse turns a file into a Scenario, locating
// every problem at a line of the file; Scenario.Script is what callctl.Run takes as
// Options.Script; Expectations.Evaluate compares a callctl.Result with the file's
// expect section and locates each failure on the call's timeline. ParseFile reads a
// file of `switchboard test`: a scenario, or several cases sharing its keys, each
// with its skip reason and what its snapshot records, and with ${VAR} references to
// the environment resolved when the caller gives a lookup.
//
// The package knows files and expectations, not how a call runs (package callctl).
package scenario
