package sqlitestore_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/switchboard-voice/switchboard/internal/outboxbench"
)

// BenchmarkWriteFloor measures the least SQLite work a durable delivery can cost, to
// bound what any outbox on this store can reach: only the statements, with no Go
// around them, no claim, no reads and no HTTP, one goroutine writing, 64 deliveries a
// transaction with synchronous=FULL (a commit for the publishes, one for their
// outcomes). In the same run it measures the plain client of outboxbench, and reports
// ceiling-ratio: the floor's delivery rate over the plain client's posts. The writer
// is serial, so no outbox on the schema can deliver faster than its floor, and
// sharing the CPU with the HTTP work lowers it further. The designs are
// outboxbench.SchemaFloor (the store's schema) and MinimalFloor.
//
//	go test -run '^$' -bench WriteFloor ./outbox/sqlitestore
func BenchmarkWriteFloor(b *testing.B) {
	// 20,000 posts: a baseline of the default 3,000 takes a fraction of a second and
	// swings with the machine's load.
	plain, err := outboxbench.Plain(context.Background(), outboxbench.Options{Deliveries: 20000})
	if err != nil {
		b.Fatal(err)
	}
	for _, design := range []struct {
		name string
		d    outboxbench.FloorDesign
	}{{"schema", outboxbench.SchemaFloor}, {"minimal", outboxbench.MinimalFloor}} {
		b.Run(design.name, func(b *testing.B) {
			st := open(b, filepath.Join(b.TempDir(), "floor.db"))
			n, err := outboxbench.WriteFloor(st.DB(), design.d, b.N)
			if err != nil {
				b.Fatal(err)
			}
			perDelivery := b.Elapsed().Seconds() / float64(n)
			b.ReportMetric(perDelivery*1e6, "µs/delivery")
			b.ReportMetric(plain, "plain-posts/s")
			b.ReportMetric(1/perDelivery/plain, "ceiling-ratio")
		})
	}
}

// BenchmarkPipelineFloor bounds the whole outbox on this store
// (outboxbench.PipelineFloor: the floor statements of one writer with the HTTP posts
// of 16 workers in the same process). It reports ratio: its delivery rate over the
// plain client's posts in the same run (20,000 of each). No outbox on the schema can
// reach a higher ratio on the same machine; `switchboard bench outbox` reports the
// schema's beside the outbox's own.
//
//	go test -run '^$' -bench PipelineFloor ./outbox/sqlitestore
func BenchmarkPipelineFloor(b *testing.B) {
	const n = 20000
	ctx := context.Background()
	plain, err := outboxbench.Plain(ctx, outboxbench.Options{Deliveries: n})
	if err != nil {
		b.Fatal(err)
	}
	for _, design := range []struct {
		name string
		d    outboxbench.FloorDesign
	}{{"schema", outboxbench.SchemaFloor}, {"minimal", outboxbench.MinimalFloor}} {
		b.Run(design.name, func(b *testing.B) {
			var rate float64
			for b.Loop() {
				if rate, err = outboxbench.PipelineFloor(ctx, outboxbench.FloorOptions{Deliveries: n, Dir: b.TempDir(), Design: design.d}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(rate, "deliveries/s")
			b.ReportMetric(plain, "plain-posts/s")
			b.ReportMetric(rate/plain, "ratio")
		})
	}
}
