package benchkit

import (
	"context"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/switchboard-voice/switchboard/internal/outboxbench"
	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
	"github.com/switchboard-voice/switchboard/outbox/pgstore"
)

// OutboxOptions shape `bench outbox`.
type OutboxOptions struct {
	// Bench is one side's run (deliveries, concurrency, publishers, SQLite's
	// synchronous); its OpenStore is set here when DatabaseURL is.
	Bench outboxbench.Options
	// DatabaseURL, when set, runs the outbox on PostgreSQL (a fresh schema each
	// round, dropped after) instead of SQLite.
	DatabaseURL string
	Rounds      int
}

// OutboxRound is what the outbox side of one round measured beyond its rate.
type OutboxRound = outboxbench.Result

// Outbox measures webhook deliveries a second through the outbox (Publish to a
// loopback receiver answering 204, every event durable before Publish returns)
// against a plain net/http client posting the same body as many times with as many
// requests in flight, the two interleaved round by round. The plain client repeats
// its posts until it has run about as long as the outbox side before it. It also returns each
// round's outbox result (lateness, CPU, the SQLite writer's share). The plain client
// runs at the collector target the process started with, not the one the outbox
// sets (outbox.Config.GCPercent).
//
// On SQLite the baseline's turn also measures the schema's pipeline floor
// (outboxbench.PipelineFloor: the store's statements for the same deliveries and the
// same posts, with nothing else), reported as two more measures: the floor ÷ the
// plain client, which no outbox on the schema can pass, and the outbox ÷ its floor,
// how much of it the outbox reaches.
func Outbox(ctx context.Context, o OutboxOptions) ([]Result, []OutboxRound, error) {
	opts := o.Bench.WithDefaults()
	if err := opts.Validate(); err != nil {
		return nil, nil, err
	}
	opts.SkipPlain = true
	// The outbox sets the process's collector target when it starts (Config.GCPercent);
	// the plain client runs at the target the program started with, as any program
	// posting webhooks itself would.
	programGC := debug.SetGCPercent(-1)
	debug.SetGCPercent(programGC)
	var (
		rounds []OutboxRound
		floors []float64
		// took is how long the last outbox side ran: the baseline runs about as long,
		// so that both sides see the machine's load over a like span.
		took time.Duration
	)
	ours := func(ctx context.Context, round int) (map[string]float64, error) {
		run := opts
		if o.DatabaseURL != "" {
			open, drop, err := pgSchema(ctx, o.DatabaseURL, round)
			if err != nil {
				return nil, err
			}
			defer drop()
			run.OpenStore = open
		}
		r, err := outboxbench.Run(ctx, run)
		if err != nil {
			return nil, err
		}
		took = time.Duration(float64(time.Second) * float64(opts.Deliveries) / r.OutboxPerSecond)
		rounds = append(rounds, r)
		return map[string]float64{"deliveries per second": r.OutboxPerSecond}, nil
	}
	baseline := func(ctx context.Context, _ int) (map[string]float64, error) {
		// Runs of opts.Deliveries posts until the span of the last outbox side is
		// covered (ten runs at most; one in the first round, which has none yet).
		var (
			posts   int
			elapsed time.Duration
		)
		outboxGC := debug.SetGCPercent(programGC)
		for posts == 0 || elapsed < took && posts < 10*opts.Deliveries {
			r, err := outboxbench.Plain(ctx, opts)
			if err != nil {
				debug.SetGCPercent(outboxGC)
				return nil, err
			}
			posts += opts.Deliveries
			elapsed += time.Duration(float64(time.Second) * float64(opts.Deliveries) / r)
		}
		debug.SetGCPercent(outboxGC)
		if o.DatabaseURL == "" {
			floor, err := outboxbench.PipelineFloor(ctx, outboxbench.FloorOptions{Deliveries: opts.Deliveries,
				Workers: opts.Concurrency, Synchronous: opts.Synchronous, Dir: opts.Dir})
			if err != nil {
				return nil, err
			}
			floors = append(floors, floor)
		}
		return map[string]float64{"deliveries per second": float64(posts) / elapsed.Seconds()}, nil
	}
	res, err := Interleave(ctx, o.Rounds, []Measure{{"deliveries per second", "deliveries/s", Higher}}, ours, baseline)
	if err != nil || len(floors) != len(res[0].PerRound) {
		return res, rounds, err
	}
	floor, share := make([]Round, len(floors)), make([]Round, len(floors))
	for i, r := range res[0].PerRound {
		floor[i] = Round{Ours: floors[i], Baseline: r.Baseline, Ratio: ratio(floors[i], r.Baseline)}
		share[i] = Round{Ours: r.Ours, Baseline: floors[i], Ratio: ratio(r.Ours, floors[i])}
	}
	return append(res,
		summarise(Measure{"schema's pipeline floor ÷ plain client", "deliveries/s", Higher}, floor),
		summarise(Measure{"outbox ÷ schema's pipeline floor", "deliveries/s", Higher}, share)), rounds, nil
}

// pgSchema creates a fresh schema on the database at dbURL and returns how to open
// stores on it and how to drop it.
func pgSchema(ctx context.Context, dbURL string, round int) (func(context.Context) (outboxdriver.Store, func() error, error), func(), error) {
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return nil, nil, fmt.Errorf("benchkit: PostgreSQL: %w", err)
	}
	schema := fmt.Sprintf("switchboard_bench_%d_%d", time.Now().UnixNano(), round)
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize()); err != nil {
		_ = conn.Close(ctx)
		return nil, nil, fmt.Errorf("benchkit: PostgreSQL: %w", err)
	}
	drop := func() {
		dctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, _ = conn.Exec(dctx, "DROP SCHEMA "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
		_ = conn.Close(dctx)
	}
	open := func(ctx context.Context) (outboxdriver.Store, func() error, error) {
		st, err := pgstore.OpenURL(ctx, dbURL, pgstore.Options{Schema: schema})
		if err != nil {
			return nil, nil, err
		}
		return st, st.Close, nil
	}
	return open, drop, nil
}
