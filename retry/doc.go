// Package retry holds the pure retry decisions shared by call control and the
// webhook outbox: backoff schedules (the jambonz ramp, exponential with factor and
// cap, a fixed list, optional jitter), failure classes, Retry-After parsing and
// clamping, and NextAttempt, which says whether and when a failed attempt is tried
// again.
//
// Everything here is a function of its inputs: time comes from an injected Clock and
// randomness from an injected source. Nothing sleeps, dials or stores; the HTTP and
// WebSocket clients in package transport and the outbox dispatcher apply these
// decisions.
package retry
