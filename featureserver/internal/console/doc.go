// Package console is the node's web console, served by `switchboard serve` under
// /console/: an account's webhook endpoints with their health, their delivery logs
// and every attempt, its calls with a timeline drawn on a time axis and live
// control, and charts of the last 24 hours.
//
// Everything it shows and does goes through the node's HTTP API (the call API of
// featureserver/internal/nodeapi and the outbox API of outbox/outboxapi), called in-process
// through their http.Handler with the signed-in account's token: the console holds
// no rules of its own, so what it refuses is what the API refuses, in the API's
// words. Pages are server-rendered html/template with the assets embedded; the one
// script is a vendored htmx, which refreshes a running call or a pending delivery in
// place, and every page works without it.
//
// A session is a random secret in an HttpOnly, SameSite=Strict cookie (Secure over
// HTTPS, X-Forwarded-Proto included); the node's database keeps its hash with the
// account, the hash of the API token it was opened with, its last use and its end
// (nodestore.Session), so a session works on every node sharing the database and
// survives a restart. A session ends after an hour unused, 12 hours after its
// sign-in, at sign-out, when its API token is rotated, or when its account signs in
// more than 20 times meanwhile (its least recently used session first: an account
// can never end another's). The console acts for the session in-process
// (nodeapi.Caller): the API checks the session's token still belongs to its
// account on every request. Each state-changing form carries a token derived from
// the session's secret, and cross-origin POSTs are refused before that
// (net/http.CrossOriginProtection). The Content-Security-Policy
// allows scripts, styles and images of the console's own origin only, no inline
// script or style. See docs/architecture.md for where it sits.
package console
