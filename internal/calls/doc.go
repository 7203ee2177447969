// Package calls is a node's call manager: it starts calls (each a callctl.Run on a
// goroutine of its own), keeps them on record in the node's store from their start,
// tracks the active ones for reading and live control (hang up, redirect, mute),
// drains them at shutdown, and ends the records a crashed run left active
// (RecoverInterrupted).
//
// It does not know how a verb runs (package callctl), how the hook clients are built
// (the Network it is given), how status notifications are delivered (the notifier it
// is given) or how a record is stored (nodestore.Store).
package calls
