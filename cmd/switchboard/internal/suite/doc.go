// Package suite runs scenario files as a test suite, as `switchboard test` does: the
// files of directories (Files), every one read and checked before any call is made
// (Load: a broken file runs nothing), their apps moved by --app, selected by name
// (Select), run N at a time (Run), each judged (every expectation holds, and the call
// did not fail unless the scenario expects it), and reported like go test: one line
// per scenario in file order, or JSON events as they happen (Reporter), and a JUnit
// XML report (WriteJUnit).
//
// What a scenario file says is callctl/scenario's; how a call runs is callctl's.
// The text, JSON and JUnit reports are the command's stable output (docs/cli.md).
package suite
