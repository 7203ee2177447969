// Package scenario reads the scenario files of `switchboard simulate --scenario` (and
// the scenario object of a call created through a node's API) and checks a finished
// call against their expectations.
//
// A scenario says what the caller and the network do during a simulated call (the
// input at each gather, the outcome of each dial, when the caller hangs up, faults
// injected on a WebSocket) and what must have happened by its end (verbs, hooks,
// final status and reason, alerts). Parse turns a file into a Scenario, locating
// every problem at a line of the file; Scenario.Script is what callctl.Run takes as
// Options.Script; Expectations.Check compares a callctl.Result with the file's
// expect section.
//
// The package knows files and expectations, not how a call runs (package callctl).
package scenario
