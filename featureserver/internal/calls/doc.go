// Package calls is a node's call manager: it starts calls (each a callctl.Run on a
// goroutine of its own, on the wall clock, within the node's call limits), keeps them
// on record in the node's store from their start (a final record is retried until
// the store takes it), tracks the active ones for reading and live control (hang up,
// redirect, mute), drains them at shutdown, and, at the next start, sends the final
// status notification of the calls a crashed run cut short and ends their records
// (RecoverInterrupted).
//
// It does not know how a verb runs (package callctl), how the hook clients are built
// (the Network it is given), how status notifications are delivered (the notifier it
// is given) or how a record is stored (nodestore.Store).
package calls
