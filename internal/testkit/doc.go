// Package testkit holds what the module's tests share, so that each package does not
// write its own copy: one manual clock (schedules of hours tested in microseconds), a
// recording retry sleep, a buffer goroutines may write while the test reads it, a
// ws.jambonz.org application, an HTTP application that redirects to itself, JSON API
// requests, the speech settings a call created with an inline call_hook needs, a
// transport that cancels a request only once the peer has it, fuzz seeds, and the
// skip of a test whose PostgreSQL, Node.js or Chromium is missing, announced where
// `go test ./...` shows it (SkipMissing). It is imported by tests and their harnesses
// only.
package testkit
