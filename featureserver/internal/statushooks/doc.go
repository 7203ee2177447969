// Package statushooks hands the call status notifications of a node's HTTP
// applications to the outbox (docs/outbox.md §7), so that they survive a receiver
// that is down and a restart of the node: one call.status event per notification,
// for an endpoint per account and status hook URL, signed with the account's status
// webhook secret (SigningSecret), and delivered as the status hook the application
// configured (docs/call-control.md §3: its method, Basic auth and Jambonz-Signature).
// A notification the outbox gives up on raises an alert on the account
// (docs/call-control.md §6).
//
// It does not run calls (package callctl gives it each notification through
// callctl.StatusNotifier) and does not retry anything itself (package outbox does).
package statushooks
