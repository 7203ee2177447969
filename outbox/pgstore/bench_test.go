package pgstore_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/internal/outboxbench"
	"github.com/switchboard-voice/switchboard/internal/pgtest"
	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
	"github.com/switchboard-voice/switchboard/outbox/outboxtest"
	"github.com/switchboard-voice/switchboard/outbox/pgstore"
)

// BenchmarkCycle: the store's cost of one delivery, publish to success (no HTTP).
//
//	go test -run '^$' -bench Cycle ./outbox/pgstore
func BenchmarkCycle(b *testing.B) {
	outboxtest.BenchmarkCycle(b, openStore(b, pgstore.Options{}))
}

// BenchmarkDeliveryVsPlainHTTP measures deliveries per second from Publish to a
// loopback receiver answering 204 with 1, 2 and 3 outboxes (nodes: a pool, a listener
// and a dispatcher each) sharing one PostgreSQL schema, and SQLite for one node; each
// beside a plain net/http client posting the same bodies at the same concurrency in
// the same run (outboxbench.Run), so the ratio is the figure to compare. It also
// reports the CPU of this process and of PostgreSQL's processes per delivery: on one
// machine the database competes for the same cores.
//
//	go test -run '^$' -bench DeliveryVsPlainHTTP -benchtime 3x ./outbox/pgstore
func BenchmarkDeliveryVsPlainHTTP(b *testing.B) {
	for _, c := range []struct {
		name  string
		nodes int
		pg    bool
	}{{"postgres-1node", 1, true}, {"postgres-2nodes", 2, true}, {"postgres-3nodes", 3, true}, {"sqlite-1node", 1, false}} {
		b.Run(c.name, func(b *testing.B) {
			opts := outboxbench.Options{Nodes: c.nodes, Dir: b.TempDir()}
			var r outboxbench.Result
			var dbCPU time.Duration
			for b.Loop() {
				if c.pg {
					u, _ := pgtest.Schema(b)
					opts.OpenStore = func(ctx context.Context) (outboxdriver.Store, func() error, error) {
						st, err := pgstore.OpenURL(ctx, u, pgstore.Options{})
						if err != nil {
							return nil, nil, err
						}
						return st, st.Close, nil
					}
				} else {
					opts.Dir = b.TempDir()
				}
				before := postgresCPU()
				var err error
				if r, err = outboxbench.Run(context.Background(), opts); err != nil {
					b.Fatal(err)
				}
				dbCPU = postgresCPU() - before
			}
			b.ReportMetric(r.OutboxPerSecond, "outbox-deliveries/s")
			b.ReportMetric(r.PlainPerSecond, "plain-posts/s")
			b.ReportMetric(r.Ratio, "ratio")
			b.ReportMetric(float64(r.LatenessP99)/float64(time.Millisecond), "p99-lateness-ms")
			b.ReportMetric(float64(r.OutboxCPU)/float64(time.Microsecond), "go-cpu-µs/delivery")
			if c.pg {
				// Both phases' database work is the outbox's: the plain client has none.
				b.ReportMetric(float64(dbCPU)/float64(time.Microsecond)/float64(r.Options.Deliveries), "pg-cpu-µs/delivery")
			}
		})
	}
}

// postgresCPU is the CPU time (user and system) of the machine's postgres processes
// so far, from /proc; zero where there is none.
func postgresCPU() time.Duration {
	entries, _ := os.ReadDir("/proc")
	var ticks int64
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(stat)
		open, close := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || close < open || !strings.HasPrefix(s[open+1:close], "postgres") {
			continue
		}
		fields := strings.Fields(s[close+1:])
		if len(fields) < 13 {
			continue
		}
		u, _ := strconv.ParseInt(fields[11], 10, 64)
		k, _ := strconv.ParseInt(fields[12], 10, 64)
		ticks += u + k
	}
	return time.Duration(ticks) * 10 * time.Millisecond // USER_HZ is 100 on Linux
}
