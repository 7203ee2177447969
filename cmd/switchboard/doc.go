// Command switchboard is the command-line front of Switchboard: `serve` runs a
// feature-server node, `simulate` plays a call against a live application, `demo`
// shows both transports end to end with built-in apps, `fragment explain` explains a
// URL's retry policy, `verify` checks a received webhook's signature, `webhooks`
// manages webhook endpoints and reads their delivery log through a node's API, `bench outbox`
// measures webhook delivery against a plain HTTP client, and `version` prints the build.
//
// This package parses flags and prints output; the behaviour lives in the packages it
// calls. Its `--json` outputs are a stable contract that scripts and tests read.
package main
