// Package nodeapi is a node's REST API on huma: accounts (created with the admin
// token), applications, calls (create, list, read with their timeline, live control),
// alerts and where an account's endpoint notices go, as JSON with RFC 9457 problem
// documents for every error and an OpenAPI document at /openapi.json. Every
// account-scoped request is authenticated by the account's bearer token before its
// input is decoded, and a token never reaches another account's records (404, as if
// they did not exist).
//
// Other operations can join the same API and document (Options.Mount: the node
// mounts the outbox API). It validates and translates; it does not run calls
// (package calls) or store anything itself (nodestore.Store).
package nodeapi
