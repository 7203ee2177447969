// Package featureserver runs a Switchboard node, what a Go program embeds to serve
// calls: the node's configuration from environment variables and flags (read here
// and nowhere else: LoadConfig, LoadCallControlConfig), a bootstrap file of accounts
// and applications (LoadBootstrap), and the Node itself (NewNode, Node.Run), which
// serves the REST API (the outbox API of outbox/outboxapi mounted beside the node's
// own, owners' notices through outbox/outboxnotify), /metrics, /healthz and /readyz
// and drains its calls when its context ends. CallNetwork builds the callctl.Options of calls with a node's
// JAMBONES_* settings, for programs that run calls without a node
// (`switchboard simulate`).
//
// The node's machinery lives under internal/: the store seam and its SQLite store
// (featureserver/internal/nodestore, featureserver/internal/nodestore/sqlitenode), the call manager
// (featureserver/internal/calls), the REST handlers (featureserver/internal/nodeapi), the status hooks through
// the outbox (featureserver/internal/statushooks) and the metrics (featureserver/internal/metrics);
// docs/architecture.md draws the graph. This package wires them together. It does not
// know how a verb runs (package callctl) or how a webhook is retried (packages retry
// and outbox).
package featureserver
