package retry

// Canceled: the caller gave up (its context was canceled) before the attempt had an
// outcome. It says nothing about the peer and is never retried; it is reported apart
// from failures of the destination.
const Canceled Class = "canceled"
