// Package dispatch runs the outbox's deliveries: a claim loop that leases due
// deliveries in batches, a pool of workers that attempt them, a single completer that
// records outcomes in batched transactions (claiming, in the same transaction, the room
// a batch frees), and the hand-off of a fresh publish straight to idle workers. What
// an outcome does is package decide's; how an attempt is made is the caller's
// (Config.Attempt).
package dispatch
