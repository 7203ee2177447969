// Package outboxapi serves the outbox as a REST API (docs/outbox.md §4): events
// published and read, webhook endpoints managed (create, read, change, remove, ping,
// pause, resume, rotate their secret), their delivery log read with every attempt,
// deliveries sent again one by one or in bulk, and the audit log. Every route is
// scoped to the account of the request's bearer token, which the embedding program
// resolves (Config.Authenticate); another account's objects answer 404.
//
// The routes are huma operations, so they appear in the embedding API's OpenAPI
// document: Register adds them to a huma.API (the node's, beside its call API);
// Handler serves them alone on an http.ServeMux with /openapi.json. JSON is camelCase,
// times RFC 3339, lists {"data": [...], "nextCursor": "..."} with keyset cursors that
// stay exact while new rows arrive, and errors RFC 9457 problem documents naming the
// field that was rejected; bad input changes nothing.
//
// The package maps HTTP to the *outbox.Outbox methods and back; it holds no state
// and no policy of its own beyond the egress check of endpoint URLs (Config.Egress).
package outboxapi
