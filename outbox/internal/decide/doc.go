// Package decide holds the outbox's decisions as pure functions of their inputs, time
// among them: what a new event's delivery to an endpoint is (Plan), what an attempt's
// outcome does to its delivery and endpoint (Outcome), what a lost lease does
// (Reaped), a pause, a manual retry. Each returns the rows or the
// outboxdriver.Change a store applies in one transaction; nothing here reads a clock,
// sends a request or touches a store.
package decide
