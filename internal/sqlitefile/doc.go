// Package sqlitefile prepares a SQLite database file before a store opens its pools:
// it creates the file readable by its owner only when none exists, and switches it to
// WAL once, on one connection, so that the pools' connections find it in WAL mode.
//
// Why once, apart: the driver runs each connection's pragmas as the connection opens,
// and SQLite refuses a switch to WAL with SQLITE_BUSY at once, busy_timeout
// notwithstanding, while another connection is switching the same file; pools opened
// on a new file by several processes at once failed so (TestOpenConcurrently in
// featureserver/internal/nodestore/sqlitenode, about one run in 150 under -count=300).
package sqlitefile
