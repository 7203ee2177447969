// Package transporttest provides fault-injecting servers for tests of HTTP and
// WebSocket clients, in the manner of net/http/httptest: a closed port (connection
// refused), a listener that never accepts (connect timeout), a listener that accepts
// and never answers, and an HTTP server that plays a scripted sequence of answers per
// path — any status, slow headers, a hang (a WebSocket upgrade that never completes),
// a reset before or in the middle of the response, an oversized body, redirects —
// while logging every request for assertions, and signalling arrivals (Received,
// Connected) so that tests wait for them instead of polling.
//
// Everything listens on 127.0.0.1 and is closed by t.Cleanup; ports are taken from the
// kernel and held for the test (ClosedAddr, SharedPort), never guessed. For tests of
// timeouts under testing/synctest, NewPipeServer serves the same scripts on an
// in-memory network (Pipes), where the bubble's clock runs the waits.
package transporttest
