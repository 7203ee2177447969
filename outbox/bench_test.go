package outbox_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/internal/outboxbench"
)

// BenchmarkDeliveryVsPlainHTTP measures deliveries per second from Publish to a
// loopback receiver answering 204 (SQLite, synchronous=FULL), and in the same run a
// plain net/http client posting the same bodies at the same concurrency. It reports
// both rates, their ratio, and the p99 lateness of attempts after their scheduled time.
//
// The concurrency is that of the HTTP requests: the plain client's goroutines and the
// outbox's Workers. Each Publish returns once its event is durable, so 16 publishers
// put at most 16 events in a commit and measure the commit latency as much as the
// outbox: the main figures use 4× as many publishers, as a server with many calls
// would; ratio-16pub uses 16. `switchboard bench outbox` runs the same measurement.
//
//	go test -run '^$' -bench DeliveryVsPlainHTTP -benchtime 3x ./outbox
//
// OUTBOX_SYNC=NORMAL runs the store with synchronous=NORMAL for comparison.
func BenchmarkDeliveryVsPlainHTTP(b *testing.B) {
	opts := outboxbench.Options{Synchronous: os.Getenv("OUTBOX_SYNC"), Dir: b.TempDir()}
	var main, pub16 outboxbench.Result
	for b.Loop() {
		main = runBench(b, opts)
		o16 := opts
		o16.Publishers = 16
		pub16 = runBench(b, o16)
	}
	b.ReportMetric(main.OutboxPerSecond, "outbox-deliveries/s")
	b.ReportMetric(main.PlainPerSecond, "plain-posts/s")
	b.ReportMetric(main.Ratio, "ratio")
	b.ReportMetric(pub16.Ratio, "ratio-16pub")
	b.ReportMetric(ms(main.LatenessP99), "p99-lateness-ms")
	// Where the time went (see outboxbench.Result).
	b.ReportMetric(us(main.PlainCPU), "plain-cpu-µs/post")
	b.ReportMetric(us(main.OutboxCPU), "cpu-µs/delivery")
	b.ReportMetric(main.WriterBusy, "writer-busy")
}

// BenchmarkLatenessPaced publishes at a steady 1,000 events/s (below the saturation
// rate measured above) and reports the p50 and p99 lateness of attempts after their
// scheduled time: the delay the dispatcher adds when it is not behind.
func BenchmarkLatenessPaced(b *testing.B) {
	var r outboxbench.Result
	for b.Loop() {
		r = runBench(b, outboxbench.Options{Publishers: 16, PerSecond: 1000, SkipPlain: true,
			Synchronous: os.Getenv("OUTBOX_SYNC"), Dir: b.TempDir()})
	}
	b.ReportMetric(ms(r.LatenessP50), "p50-lateness-ms")
	b.ReportMetric(ms(r.LatenessP99), "p99-lateness-ms")
}

func runBench(b *testing.B, opts outboxbench.Options) outboxbench.Result {
	b.Helper()
	r, err := outboxbench.Run(context.Background(), opts)
	if err != nil {
		b.Fatal(err)
	}
	return r
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
