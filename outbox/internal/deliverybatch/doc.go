// Package deliverybatch holds what the outbox stores' batched completions (pgstore's
// and sqlitestore's Complete, CompleteClaim and Reap; pgstore's UpdateDelivery) do
// alike: the deliveries a batch has read, with their lease tokens, the delivery
// updates and attempts it has buffered, and the order in which one delivery is
// decided. Each store keeps its SQL: how the batch reads rows, locks them and writes
// what it buffered.
//
// Every decision sees the state a statement-by-statement application would have
// shown it: a delivery changed earlier in the batch is served from the batch as the
// update leaves it, and one whose update is still buffered is read again only once
// the store wrote the buffer.
package deliverybatch
