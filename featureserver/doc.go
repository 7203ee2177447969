// Package featureserver is a Switchboard node: configuration from environment
// variables and flags (read here and nowhere else), the call manager that starts,
// tracks and drains calls, the REST API to create calls and read alerts, metrics and
// health, and the wiring of call status notifications into the outbox.
//
// It does not know how a verb runs (package callctl) or how a webhook is retried
// (packages retry and outbox).
package featureserver
