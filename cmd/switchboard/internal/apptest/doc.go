// Package apptest is `switchboard test`: it runs folders of scenario files against
// the applications they name, as go test runs a package's tests, and reports the
// result as text, JSON events and JUnit XML.
//
// Run reads and checks every file first (a bad one runs nothing), starts the
// applications under test when asked (--start, or start: in a folder's
// switchboard-test.yaml: package appstart), places one simulated call per scenario
// and run (--count, --parallel), judges each against its expectations and its
// snapshot (package snapshot; --update records them), and tells a call that could
// not reach its application (an error) from one that did the wrong thing (a
// failure). Watch does the same again whenever a scenario's file or its
// application's files change.
//
// The package knows scenario files, runs and reports; how a call runs is callctl's,
// what a scenario file says is package scenario's, and the network the calls use
// (clients, egress rules, JAMBONES_* settings) is given by the caller
// (Config.CallOptions).
package apptest
