// Package testkit holds what the module's tests share, so that each package does not
// write its own copy: one manual clock (schedules of hours tested in microseconds), a
// recording retry sleep, a buffer goroutines may write while the test reads it, a
// ws.jambonz.org application, an HTTP application that redirects to itself, JSON API
// requests, a transport that cancels a request only once the peer has it, and fuzz
// seeds. It is imported by tests and their harnesses only.
package testkit
