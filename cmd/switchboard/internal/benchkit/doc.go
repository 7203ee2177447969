// Package benchkit is the machinery of `switchboard bench`: each bench starts what
// it needs on loopback and measures ours beside a baseline in the same run,
// interleaved round by round, so that a change of load on a shared machine falls on
// both sides and cancels out of their ratio (docs/BENCHMARKS.md); Write prints the
// results as the command shows them (a table, JSON lines, or Markdown).
package benchkit
