// Package transporttest provides fault-injecting servers for tests of HTTP and
// WebSocket clients, in the manner of net/http/httptest: a closed port (connection
// refused), a listener that never accepts (connect timeout), a listener that accepts
// and never answers, and an HTTP server that plays a scripted sequence of answers per
// path — any status, slow headers, a hang (a WebSocket upgrade that never completes),
// a reset before or in the middle of the response, an oversized body, redirects —
// while logging every request for assertions.
//
// Everything listens on 127.0.0.1 and is closed by t.Cleanup.
package transporttest
