package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/switchboard-voice/switchboard/cmd/switchboard/internal/benchkit"
	"github.com/switchboard-voice/switchboard/internal/dburl"
)

func newBenchCmd(c *cli) *cobra.Command {
	cmd := groupCommand("bench", "Measure this machine: each figure beside a baseline from the same run, interleaved")
	cmd.Long = `Each bench starts what it needs on loopback and runs ours and a baseline in
turns, round after round (the baseline first in odd rounds, ours first in even
ones), so that a change of load on the machine falls on both sides. It prints the
median of each side and the min, median and max of their ratio over the rounds:
the ratio is the figure to compare between runs and machines (docs/BENCHMARKS.md).
Each measure says which way is better: higher (a rate) or lower (a time, a
size); its ratio improves the same way. With --json it prints one object per
measure: measure, ours, baseline, ratio {min, median, max}, unit, better, rounds
and per_round.`
	cmd.AddCommand(newBenchHooksCmd(c), newBenchWSCmd(c), newBenchCallsCmd(c), newBenchOutboxCmd(c), newBenchBacklogCmd(c))
	return cmd
}

// benchFlags are the flags every bench has.
type benchFlags struct {
	rounds   int
	json     bool
	markdown bool
}

func (b *benchFlags) add(cmd *cobra.Command) {
	cmd.Flags().IntVar(&b.rounds, "rounds", 5, "rounds, each running ours and the baseline once")
	cmd.Flags().BoolVar(&b.json, "json", false, "print one JSON object per measure")
	cmd.Flags().BoolVar(&b.markdown, "markdown", false, "print the table in Markdown (scripts/benchmarks.sh builds docs/BENCHMARKS.md of it)")
}

func (b *benchFlags) check(name string) error {
	if b.rounds < 1 || b.rounds > 1000 {
		return usageError("bench %s: --rounds must be in [1, 1000], got %d", name, b.rounds)
	}
	if b.json && b.markdown {
		return usageError("bench %s: --json and --markdown are exclusive", name)
	}
	return nil
}

// benchRun is what one run of a bench prints: its results under title and, below
// the table only (not with --json or --markdown), what details prints.
type benchRun struct {
	title   string
	results []benchkit.Result
	details func() error
}

// benchCommand completes cmd, whose documentation the caller wrote, as the bench
// name: the flags of every bench are added; a run checks them and every minimum
// (flag, value, least triples, as atLeast takes them, read when it runs), then
// prints what measure returns for --rounds. measure's error is returned as it is.
func benchCommand(c *cli, name string, cmd *cobra.Command, minimums func() []any, measure func(ctx context.Context, rounds int) (benchRun, error)) *cobra.Command {
	bf := &benchFlags{}
	cmd.Use, cmd.Args = name, cobra.NoArgs
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if err := bf.check(name); err != nil {
			return err
		}
		if err := atLeast(name, minimums()...); err != nil {
			return err
		}
		run, err := measure(cmd.Context(), bf.rounds)
		if err != nil {
			return err
		}
		if err := benchkit.Write(c.stdout, bf.format(), run.title, run.results); err != nil || bf.format() != benchkit.Table || run.details == nil {
			return err
		}
		return run.details()
	}
	bf.add(cmd)
	return cmd
}

// atLeast returns a usage error naming the first flag below its minimum.
func atLeast(name string, flags ...any) error {
	for i := 0; i+2 < len(flags); i += 3 {
		flag, v, least := flags[i].(string), flags[i+1].(int), flags[i+2].(int)
		if v < least {
			return usageError("bench %s: --%s must be at least %d, got %d", name, flag, least, v)
		}
	}
	return nil
}

// format is how the flags ask the results printed.
func (b *benchFlags) format() benchkit.Format {
	switch {
	case b.json:
		return benchkit.JSON
	case b.markdown:
		return benchkit.Markdown
	}
	return benchkit.Table
}

func newBenchHooksCmd(c *cli) *cobra.Command {
	var o benchkit.HooksOptions
	cmd := benchCommand(c, "hooks", &cobra.Command{
		Short: "A call hook's round trip through our hook client against plain net/http",
		Long: `Bench hooks sends call hooks, one after the other, to a loopback app answering a
small verb array: through transport.HookClient (the node's hook client: retry
policy, egress rules, capped body read), and as the baseline the same POST with a
plain net/http client. The measure is microseconds a round trip.`,
		Example: "  switchboard bench hooks\n  switchboard bench hooks --requests 20000 --rounds 9 --json",
	}, func() []any { return []any{"requests", o.Requests, 1} }, func(ctx context.Context, rounds int) (benchRun, error) {
		o.Rounds = rounds
		res, err := benchkit.Hooks(ctx, o)
		if err != nil {
			return benchRun{}, failure(err)
		}
		return benchRun{title: fmt.Sprintf("hooks: %d requests a side a round", o.Requests), results: res}, nil
	})
	cmd.Flags().IntVar(&o.Requests, "requests", 15000, "hooks each side sends a round")
	return cmd
}

func newBenchWSCmd(c *cli) *cobra.Command {
	var o benchkit.WSOptions
	cmd := benchCommand(c, "ws", &cobra.Command{
		Short: "A WebSocket request and its ack through our client against bare coder/websocket",
		Long: `Bench ws sends a message to a loopback echo server and reads the answer, one
after the other, over a wsclient.Conn (a call's connection: payload limit, close
handling) and, as the baseline, over a bare coder/websocket connection. The
measure is microseconds a request/ack.`,
		Example: "  switchboard bench ws\n  switchboard bench ws --size 4096 --json",
	}, func() []any { return []any{"messages", o.Messages, 1, "size", o.Size, 1} }, func(ctx context.Context, rounds int) (benchRun, error) {
		o.Rounds = rounds
		res, err := benchkit.WS(ctx, o)
		if err != nil {
			return benchRun{}, usageOr(err)
		}
		return benchRun{title: fmt.Sprintf("ws: %d request/acks of %d bytes a side a round", o.Messages, o.Size), results: res}, nil
	})
	cmd.Flags().IntVar(&o.Messages, "messages", 40000, "request/acks each side makes a round")
	cmd.Flags().IntVar(&o.Size, "size", 200, "bytes of each request")
	return cmd
}

// usageOr makes a benchkit error about the options a usage error, any other a
// failure.
func usageOr(err error) error {
	if strings.HasPrefix(err.Error(), "benchkit: ") {
		return usageError("%v", err)
	}
	return failure(err)
}

func newBenchCallsCmd(c *cli) *cobra.Command {
	var o benchkit.CallsOptions
	cmd := benchCommand(c, "calls", &cobra.Command{
		Short: "Memory and goroutines of live WebSocket calls against bare sockets",
		Long: `Bench calls holds --calls WebSocket calls live at once against a loopback app that
acks session:new with no verbs (each call waits, as one on hold does), and
measures the heap and goroutine stacks of the processes holding them, per call.
The baseline is as many bare coder/websocket connections to the same app, each
with its reader goroutine: what the socket alone costs.

The apps run in processes of their own. It raises the open-files limit to the hard
limit and, when one process cannot hold --calls, spreads them over several client
processes, each with its own app on its own loopback address (127.0.0.1,
127.0.0.2, ...), all live at the same time before any is released.`,
		Example: "  switchboard bench calls\n  switchboard bench calls --calls 100000 --rounds 3",
	}, func() []any { return []any{"calls", o.Calls, 1, "per-process", o.PerProcess, 0} }, func(ctx context.Context, rounds int) (benchRun, error) {
		plan, err := benchkit.PlanCalls(o.Calls, o.PerProcess)
		if err != nil {
			return benchRun{}, usageError("bench calls: %v", err)
		}
		o.Rounds, o.Stderr = rounds, c.stderr
		o.Progress = func(s string) { fmt.Fprintln(c.stderr, s) }
		res, _, err := benchkit.Calls(ctx, o)
		if err != nil {
			return benchRun{}, failure(err)
		}
		return benchRun{title: fmt.Sprintf("calls: %d live at once in %d client process(es) on %s", o.Calls, plan.Processes,
			strings.Join(plan.Addresses, ", ")), results: res}, nil
	})
	cmd.Flags().IntVar(&o.Calls, "calls", 2000, "calls held live at once")
	cmd.Flags().IntVar(&o.PerProcess, "per-process", 0, "most calls one process holds (default: its open-files limit allows)")
	return cmd
}

func newBenchOutboxCmd(c *cli) *cobra.Command {
	var (
		o     benchkit.OutboxOptions
		dbURL string
	)
	cmd := benchCommand(c, "outbox", &cobra.Command{
		Short: "Webhook deliveries per second through the outbox against a plain HTTP client",
		Long: `Bench outbox publishes events through the outbox (SQLite in a temporary
directory, fsync on every commit unless --sync NORMAL; PostgreSQL with
--database-url, a fresh schema each round) to a loopback receiver answering 204,
and waits until the receiver has them all; the baseline posts the same body as
many times with a plain net/http client, as many requests in flight. The two run
in turns, round after round. On SQLite the baseline's turn also measures the
schema's pipeline floor: the store's own statements for as many deliveries, with
the same posts and nothing else (no claim, read, decision or signature). No outbox
on the schema can pass it: the table shows it against the plain client, and the
outbox as a share of it. Below the table it shows each outbox round's lateness
after schedule, the CPU it spent a delivery and, on SQLite, how busy the single
writer was: a writer busy nearly all the run, with cores to spare, is the outbox's
bottleneck.

--concurrency is the requests in flight on both sides: the plain client's goroutines
and the outbox's workers. Publish returns once an event is durable, so each publisher
has one event in a commit at a time: --publishers defaults to 4x the concurrency.`,
		Example: "  switchboard bench outbox\n" +
			"  switchboard bench outbox --deliveries 10000 --publishers 16 --json\n" +
			"  switchboard bench outbox --database-url postgres://postgres@127.0.0.1:5432/test",
	}, func() []any {
		return []any{"deliveries", o.Bench.Deliveries, 1, "concurrency", o.Bench.Concurrency, 1, "nodes", o.Bench.Nodes, 1}
	}, func(ctx context.Context, rounds int) (benchRun, error) {
		full := o.Bench.WithDefaults()
		if err := full.Validate(); err != nil {
			return benchRun{}, usageError("bench outbox: %v", err)
		}
		if err := checkDir("outbox", o.Bench.Dir); err != nil {
			return benchRun{}, err
		}
		if dbURL == "" && full.Nodes > 1 {
			return benchRun{}, usageError("bench outbox: --nodes above 1 needs --database-url: SQLite has one node a file")
		}
		if dbURL != "" {
			switch loc, err := dburl.Parse(dbURL); {
			case err != nil:
				return benchRun{}, usageError("bench outbox: --database-url: %v", err)
			case loc.Driver != dburl.Postgres:
				return benchRun{}, usageError("bench outbox: --database-url must be a postgres:// URL")
			}
		}
		o.Bench, o.DatabaseURL, o.Rounds = full, dbURL, rounds
		res, outboxRounds, err := benchkit.Outbox(ctx, o)
		if err != nil {
			return benchRun{}, failure(err)
		}
		store := "SQLite synchronous=" + full.Synchronous
		if dbURL != "" {
			store = fmt.Sprintf("PostgreSQL, %d node(s)", full.Nodes)
		}
		return benchRun{title: fmt.Sprintf("outbox: %d deliveries, %d in flight, %d publishers, %s", full.Deliveries,
			full.Concurrency, full.Publishers, store), results: res, details: func() error { return benchkit.WriteOutboxRounds(c.stdout, outboxRounds) }}, nil
	})
	f := cmd.Flags()
	f.IntVar(&o.Bench.Deliveries, "deliveries", 3000, "events to publish (and plain posts to make) a round")
	f.IntVar(&o.Bench.Concurrency, "concurrency", 16, "HTTP requests in flight, on both sides")
	f.IntVar(&o.Bench.Publishers, "publishers", 0, "goroutines publishing (default 4x --concurrency)")
	f.IntVar(&o.Bench.PerSecond, "per-second", 0, "pace publishing to this many events a second (0: as fast as possible)")
	f.IntVar(&o.Bench.BatchSize, "batch", 0, "deliveries the outbox claims at once (default the outbox's Config.BatchSize default)")
	f.IntVar(&o.Bench.EndpointCap, "endpoint-cap", 0, "the endpoint's maxInFlight override (default 8x --concurrency, at most 1000)")
	f.StringVar(&o.Bench.Synchronous, "sync", "FULL", "SQLite synchronous: FULL (fsync every commit) or NORMAL")
	f.StringVar(&o.Bench.Dir, "dir", "", "directory for the database files (default a temporary one, removed after)")
	f.StringVar(&dbURL, "database-url", "", "run on PostgreSQL at this postgres:// URL (a schema of its own each round)")
	f.IntVar(&o.Bench.Nodes, "nodes", 1, "outboxes sharing the PostgreSQL database, each with its store, workers and a share of the publishers (nodes of one cluster, in this process)")
	return cmd
}

func newBenchBacklogCmd(c *cli) *cobra.Command {
	var o benchkit.BacklogOptions
	cmd := benchCommand(c, "backlog", &cobra.Command{
		Short: "A claim at the head of a large backlog of scheduled deliveries against a small one",
		Long: `Bench backlog fills a SQLite store with --scheduled deliveries waiting for a later
time (over 100 endpoints, spread over the next day, as retries in backoff are) and
a baseline store with --baseline of them. Each round, on each store, it publishes
--head deliveries due now and times the claim that takes them, --claims times,
then measures the memory the open store holds: the Go heap, and the resident set
(which counts SQLite's page cache). Ratios near 1 mean the backlog costs the head
nothing: the claim reads the due index, and memory stays flat. A claim is timed
through its commit: with --sync FULL (the store's default) that includes an fsync,
with --sync NORMAL it is the claim's own work.`,
		Example: "  switchboard bench backlog\n  switchboard bench backlog --scheduled 1000000",
	}, func() []any {
		return []any{"scheduled", o.Scheduled, 1, "baseline", o.Baseline, 0, "head", o.Head, 1, "claims", o.Claims, 1}
	}, func(ctx context.Context, rounds int) (benchRun, error) {
		if o.Head > 100 {
			return benchRun{}, usageError("bench backlog: --head must be at most 100 (one delivery per endpoint), got %d", o.Head)
		}
		if o.Synchronous = strings.ToUpper(o.Synchronous); o.Synchronous != "FULL" && o.Synchronous != "NORMAL" {
			return benchRun{}, usageError("bench backlog: --sync must be FULL or NORMAL, got %q", o.Synchronous)
		}
		if err := checkDir("backlog", o.Dir); err != nil {
			return benchRun{}, err
		}
		o.Rounds = rounds
		o.Progress = func(s string) { fmt.Fprintln(c.stderr, s) }
		res, err := benchkit.Backlog(ctx, o)
		if err != nil {
			return benchRun{}, failure(err)
		}
		title := fmt.Sprintf("backlog: %d scheduled against %d, claims of %d", o.Scheduled, o.Baseline, o.Head)
		if o.Synchronous != "FULL" {
			title += ", SQLite synchronous=" + o.Synchronous
		}
		return benchRun{title: title, results: res}, nil
	})
	cmd.Flags().IntVar(&o.Scheduled, "scheduled", 200_000, "deliveries scheduled for later in the large store (1000000 for the goal of docs/BENCHMARKS.md: about two minutes to fill)")
	cmd.Flags().IntVar(&o.Baseline, "baseline", 1000, "deliveries scheduled for later in the baseline store")
	cmd.Flags().IntVar(&o.Head, "head", 100, "deliveries due at each claim (the claim's limit), at most 100")
	cmd.Flags().IntVar(&o.Claims, "claims", 20, "claims each side times a round")
	cmd.Flags().StringVar(&o.Dir, "dir", "", "directory for the database files (default a temporary one, removed after)")
	cmd.Flags().StringVar(&o.Synchronous, "sync", "FULL", "the timed stores' SQLite synchronous: FULL (fsync every commit, the claim's included) or NORMAL (the claim's own work)")
	return cmd
}

// checkDir refuses, as a usage error of the bench name, a --dir that is given and is
// not an existing directory.
func checkDir(name, dir string) error {
	if dir == "" {
		return nil
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return usageError("bench %s: --dir %s: not an existing directory", name, dir)
	}
	return nil
}
