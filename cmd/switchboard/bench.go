package main

import (
	"encoding/json"
	"fmt"
	"os"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/switchboard-voice/switchboard/internal/outboxbench"
)

func init() { extraCommands = append(extraCommands, newBenchCmd) }

func newBenchCmd(c *cli) *cobra.Command {
	cmd := groupCommand("bench", "Measure this machine: each figure beside a baseline from the same run")
	cmd.AddCommand(newBenchOutboxCmd(c))
	return cmd
}

// benchOutboxJSON is the --json output of `bench outbox`.
type benchOutboxJSON struct {
	Deliveries      int     `json:"deliveries"`
	Concurrency     int     `json:"concurrency"`
	Publishers      int     `json:"publishers"`
	PerSecond       int     `json:"per_second"`
	Synchronous     string  `json:"synchronous"`
	PlainPerSecond  float64 `json:"plain_per_second"`
	OutboxPerSecond float64 `json:"outbox_per_second"`
	Ratio           float64 `json:"ratio"`
	LatenessP50MS   float64 `json:"lateness_p50_ms"`
	LatenessP99MS   float64 `json:"lateness_p99_ms"`
	LatenessMaxMS   float64 `json:"lateness_max_ms"`
	// Where the time went: process CPU per request (0 where not measured), the cores
	// it kept busy, and the SQLite writer's share of the outbox phase.
	PlainCPUMicros       float64 `json:"plain_cpu_us_per_post"`
	OutboxCPUMicros      float64 `json:"outbox_cpu_us_per_delivery"`
	PlainCores           float64 `json:"plain_cores"`
	OutboxCores          float64 `json:"outbox_cores"`
	WriterBusy           float64 `json:"writer_busy"`
	WriterCommitting     float64 `json:"writer_committing"`
	WritesPerTransaction float64 `json:"writes_per_transaction"`
}

func newBenchOutboxCmd(c *cli) *cobra.Command {
	var (
		opts   outboxbench.Options
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "outbox",
		Short: "Webhook deliveries per second against a plain HTTP client, on loopback",
		Long: `Bench outbox runs a loopback receiver answering 204, posts to it with a plain
net/http client, then publishes as many events through the outbox (SQLite in a
temporary directory) and waits until the receiver has them all. It prints both rates,
their ratio (the figure to compare between machines: the noise of a shared machine
cancels out of it) and how late attempts started after their scheduled time. It also
shows where the time went: the CPU each side spent per request and the cores it kept
busy, and how much of the run the store's single SQLite writer was busy. A writer
busy nearly all the run, with cores to spare, is the outbox's bottleneck.

--concurrency is the requests in flight on both sides: the plain client's goroutines
and the outbox's workers. Publish returns once an event is durable, so each publisher
has one event in a commit at a time: --publishers defaults to 4x the concurrency.`,
		Example: "  switchboard bench outbox\n" +
			"  switchboard bench outbox --deliveries 10000 --publishers 16 --json\n" +
			"  switchboard bench outbox --per-second 1000   # lateness when not saturated",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// In the library 0 means the default; on the command line the defaults
			// are the flags' own, so 0 is a mistake.
			if opts.Deliveries < 1 || opts.Concurrency < 1 {
				return usageError("bench outbox: --deliveries and --concurrency must be at least 1")
			}
			full, err := opts.WithDefaults()
			if err != nil {
				return usageError("bench outbox: %v", err)
			}
			if opts.Dir != "" {
				if fi, err := os.Stat(opts.Dir); err != nil || !fi.IsDir() {
					return usageError("bench outbox: --dir %s: not an existing directory", opts.Dir)
				}
			}
			res, err := outboxbench.Run(cmd.Context(), full)
			if err != nil {
				return failure(err)
			}
			if asJSON {
				return printBenchOutboxJSON(c, res)
			}
			printBenchOutbox(c, res)
			return nil
		},
	}
	f := cmd.Flags()
	f.IntVar(&opts.Deliveries, "deliveries", 3000, "events to publish (and plain posts to make)")
	f.IntVar(&opts.Concurrency, "concurrency", 16, "HTTP requests in flight, on both sides")
	f.IntVar(&opts.Publishers, "publishers", 0, "goroutines publishing (default 4x --concurrency)")
	f.IntVar(&opts.PerSecond, "per-second", 0, "pace publishing to this many events a second (0: as fast as possible)")
	f.StringVar(&opts.Synchronous, "sync", "FULL", "SQLite synchronous: FULL (fsync every commit) or NORMAL")
	f.StringVar(&opts.Dir, "dir", "", "directory for the database file (default a temporary one, removed after)")
	f.BoolVar(&opts.SkipPlain, "skip-plain", false, "do not run the plain client (no ratio)")
	f.BoolVar(&asJSON, "json", false, "print one JSON object")
	return cmd
}

func printBenchOutbox(c *cli, r outboxbench.Result) {
	o := r.Options
	fmt.Fprintf(c.stdout, "outbox: %d deliveries, %d in flight, %d publishers, SQLite synchronous=%s\n",
		o.Deliveries, o.Concurrency, o.Publishers, o.Synchronous)
	w := tabwriter.NewWriter(c.stdout, 0, 0, 2, ' ', 0)
	if !o.SkipPlain {
		fmt.Fprintf(w, "  plain net/http client\t%.0f posts/s\n", r.PlainPerSecond)
	}
	fmt.Fprintf(w, "  outbox, Publish to receiver\t%.0f deliveries/s\n", r.OutboxPerSecond)
	if !o.SkipPlain {
		fmt.Fprintf(w, "  ratio\t%.3f of the plain client\n", r.Ratio)
	}
	fmt.Fprintf(w, "  lateness after schedule\tp50 %s, p99 %s, max %s\n",
		roundMS(r.LatenessP50), roundMS(r.LatenessP99), roundMS(r.LatenessMax))
	if !o.SkipPlain && r.PlainCPU > 0 {
		fmt.Fprintf(w, "  CPU, plain client\t%.0f µs a post, %.2f cores\n", micros(r.PlainCPU), r.PlainCores)
	}
	if r.OutboxCPU > 0 {
		fmt.Fprintf(w, "  CPU, outbox\t%.0f µs a delivery, %.2f cores\n", micros(r.OutboxCPU), r.OutboxCores)
	}
	fmt.Fprintf(w, "  SQLite writer\tbusy %.0f%% of the run (committing %.0f%%), %.1f writes a transaction\n",
		100*r.WriterBusy, 100*r.WriterCommitting, r.WritesPerTransaction)
	_ = w.Flush()
}

func micros(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

func printBenchOutboxJSON(c *cli, r outboxbench.Result) error {
	o := r.Options
	enc := json.NewEncoder(c.stdout)
	return enc.Encode(benchOutboxJSON{Deliveries: o.Deliveries, Concurrency: o.Concurrency, Publishers: o.Publishers,
		PerSecond: o.PerSecond, Synchronous: o.Synchronous, PlainPerSecond: r.PlainPerSecond,
		OutboxPerSecond: r.OutboxPerSecond, Ratio: r.Ratio, LatenessP50MS: msFloat(r.LatenessP50),
		LatenessP99MS: msFloat(r.LatenessP99), LatenessMaxMS: msFloat(r.LatenessMax),
		PlainCPUMicros: micros(r.PlainCPU), OutboxCPUMicros: micros(r.OutboxCPU), PlainCores: r.PlainCores,
		OutboxCores: r.OutboxCores, WriterBusy: r.WriterBusy, WriterCommitting: r.WriterCommitting,
		WritesPerTransaction: r.WritesPerTransaction})
}

func roundMS(d time.Duration) time.Duration {
	if d >= 10*time.Millisecond {
		return d.Round(time.Millisecond)
	}
	return d.Round(10 * time.Microsecond)
}

func msFloat(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
