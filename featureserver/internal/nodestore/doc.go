// Package nodestore is the seam between a Switchboard node and its database: the
// Store interface a database implements for everything the node keeps apart from the
// outbox (accounts and their API tokens, applications, call records with their
// timelines, alerts, the configuration of status hooks, where an account's endpoint
// notices go), the rows it keeps, one params
// struct per method that has several inputs, and ErrNotFound. It is to the node what
// outbox/outboxdriver is to the outbox.
//
// Implementations import this package and nothing else of the node: the SQLite store
// (nodestore/sqlitenode) implements Store, and every implementation passes the suite
// in nodestore/nodestoretest. The call manager, the REST API and the status hooks use
// a Store and never a database.
//
// The package holds no policy and no I/O: what a record means (how a call interrupted
// by a crash ends, who may read what) is its callers'. The times a store writes come
// in the rows and params, so that tests pin them. It also defines the identifiers and
// credentials of its rows (NewSid, NewSecret, HashToken), so that every implementation
// and caller agree on them.
package nodestore
