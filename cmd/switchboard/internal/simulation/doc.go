// Package simulation runs the simulated calls of `switchboard simulate`: the calls'
// network as the command line has it (Network: loopback allowed, the JAMBONES_*
// settings), N calls of one app at a time (Simulation, InParallel), each call's
// timeline printed as text or JSON lines, a progress bar on a terminal, and the
// summary (completed, failed, canceled, alerts, expectations, hook latency
// percentiles, rate). `switchboard test` and the demo place their calls with it too.
//
// The printed timeline and summary are the command's stable output (docs/cli.md,
// `simulate --json`). How a call runs is callctl's; what a scenario expects is
// callctl/scenario's.
package simulation
