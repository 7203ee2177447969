// Package snapshot records what a call did as the expected result of its scenario,
// and tells a later call that did otherwise by a readable diff: the snapshots of
// `switchboard test --update` (docs/testing.md §4).
//
// Record keeps of a call what says what the application did and what it was told:
// the final status and reason, the verbs in order, the hooks requested, the requests
// the application received (hook, message type, method, and the payload fields a
// scenario chose), the alerts and the compatibility warnings. Values that change
// from call to call (sids and other ids, addresses of the node, timestamps) are
// masked by rule, and the scenario may mask more. Text writes a Call the one way it
// is compared; File is a scenario file's snapshot file, one entry per scenario.
//
// The package knows calls and snapshot files, not how scenarios are run or judged
// (package apptest).
package snapshot
