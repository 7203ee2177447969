// Package demo is `switchboard demo`: the two example apps on loopback (HTTP
// webhooks and WebSocket), one simulated call against each with its timeline, then
// one webhook through the outbox on a SQLite file to a receiver that fails twice,
// the outbox closed and opened again between attempts and every signature checked
// (Run); and the example apps alone on an address (ServeApps). Its output is the
// command's stable output (docs/cli.md).
package demo
