// Package appstart starts the application under test, waits until it accepts
// connections, and stops it: `switchboard test --start "CMD"` and the start: of a
// folder's switchboard-test.yaml (docs/testing.md §3).
//
// Start runs a shell command line in a process group of its own, keeping the tail
// of its output; WaitReady polls the addresses the scenarios connect to until each
// accepts a TCP connection, the app exits, or the time given runs out, and says
// which, with the app's output; Stop ends the whole group (a shell, npm and the node
// process it runs), SIGTERM first and SIGKILL after a grace period.
//
// The package knows processes and addresses, not scenarios.
package appstart
