package outboxbench_test

import (
	"context"
	"runtime"
	"testing"

	"github.com/switchboard-voice/switchboard/internal/outboxbench"
)

// TestRun: a small run measures both sides on loopback and leaves nothing running;
// the figures are positive and consistent with each other (no timing is asserted).
func TestRun(t *testing.T) {
	r, err := outboxbench.Run(context.Background(), outboxbench.Options{Deliveries: 200, Concurrency: 4, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if r.Options.Publishers != 16 || r.Options.Synchronous != "FULL" {
		t.Fatalf("defaults: %+v", r.Options)
	}
	if r.PlainPerSecond <= 0 || r.OutboxPerSecond <= 0 || r.Ratio != r.OutboxPerSecond/r.PlainPerSecond {
		t.Fatalf("rates: %+v", r)
	}
	if r.LatenessP50 > r.LatenessP99 || r.LatenessP99 > r.LatenessMax || r.LatenessMax <= 0 {
		t.Fatalf("lateness: p50 %v, p99 %v, max %v", r.LatenessP50, r.LatenessP99, r.LatenessMax)
	}
	// The writer ran every publish and record in the phase: some time, no more than
	// all of it, grouping at least one write per transaction.
	if r.WriterBusy <= 0 || r.WriterBusy > 1 || r.WriterCommitting <= 0 || r.WriterCommitting > r.WriterBusy ||
		r.WritesPerTransaction < 1 {
		t.Fatalf("writer: busy %v, committing %v, writes/transaction %v", r.WriterBusy, r.WriterCommitting, r.WritesPerTransaction)
	}
	if runtime.GOOS == "linux" && (r.PlainCPU <= 0 || r.OutboxCPU <= 0 || r.PlainCores <= 0 || r.OutboxCores <= 0) {
		t.Fatalf("CPU: plain %v on %.2f cores, outbox %v on %.2f cores", r.PlainCPU, r.PlainCores, r.OutboxCPU, r.OutboxCores)
	}
}

// TestRunRejectsBadOptions: out-of-range options are named and nothing runs.
func TestRunRejectsBadOptions(t *testing.T) {
	for _, o := range []outboxbench.Options{{Deliveries: -1}, {Concurrency: 20000}, {Publishers: -3},
		{PerSecond: -1}, {Synchronous: "OFF"}} {
		if _, err := outboxbench.Run(context.Background(), o); err == nil {
			t.Errorf("Run(%+v): no error", o)
		}
	}
}
