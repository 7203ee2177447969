// Package outboxbench measures the outbox against a baseline in the same run: the
// deliveries per second from Publish to a loopback receiver answering 204, beside a
// plain net/http client posting the same bodies at the same concurrency, and the
// lateness of attempts after their scheduled time. The machine's noise cancels out of
// the ratio, not of the rates. `go test -bench` and `switchboard bench outbox` both
// run it. It is a harness, not an API: it lives under internal/ with the module's
// other machinery.
package outboxbench
