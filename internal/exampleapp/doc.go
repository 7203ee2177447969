// Package exampleapp holds two tiny jambonz-style applications written the way
// real jambonz apps are: an HTTP webhook app (HTTPApp) and a WebSocket app speaking
// the ws.jambonz.org protocol (WSApp). Both run an IVR: a greeting, a gather for a
// digit or speech, an answer that depends on the input, and a hangup. `switchboard
// demo` serves them, and the tests and benchmarks of callctl, featureserver and the
// CLI run calls against them on loopback.
//
// They are applications, not part of the node: they know HTTP servers and
// WebSockets (server side) and nothing of callctl. They live under internal/
// because nothing outside this module should build on them.
package exampleapp
