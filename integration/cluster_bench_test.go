package integration

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/internal/outboxbench"
	"github.com/switchboard-voice/switchboard/internal/pgtest"
)

// BenchmarkServeDeliveries measures webhook deliveries per second through real
// `switchboard serve` processes: 1, 2 and 3 of them on one PostgreSQL schema, and one
// on SQLite. Each run publishes the events through the nodes' outbox API (POST
// /api/v1/events, spread over the nodes) and ends when a loopback receiver answering
// 204 has every one; beside it, in the same run, a plain net/http client posts as
// many bodies at the same concurrency (outboxbench.Plain), so the ratio is the
// figure to compare between machines. Where the time goes: the CPU per delivery of
// the serve processes, of PostgreSQL's processes, and of this process (publishers and
// receiver). docs/outbox.md §5 has the figures.
//
//	go test -run '^$' -bench ServeDeliveries -benchtime 1x ./integration
func BenchmarkServeDeliveries(b *testing.B) {
	const (
		events      = 3000
		concurrency = 32
	)
	for _, c := range []struct {
		name  string
		nodes int
		pg    bool
	}{{"postgres-1node", 1, true}, {"postgres-2nodes", 2, true}, {"postgres-3nodes", 3, true}, {"sqlite-1node", 1, false}} {
		b.Run(c.name, func(b *testing.B) {
			var rate, plain, serveCPU, dbCPU, selfCPU float64
			for b.Loop() {
				var err error
				if plain, err = outboxbench.Plain(context.Background(), outboxbench.Options{Deliveries: events, Concurrency: concurrency}); err != nil {
					b.Fatal(err)
				}
				dbURL := "sqlite:" + filepath.Join(b.TempDir(), "node.db")
				if c.pg {
					dbURL, _ = pgtest.Schema(b)
				}
				r := serveRun(b, dbURL, c.nodes, events, concurrency)
				rate, serveCPU, dbCPU, selfCPU = r.rate, r.serveCPU, r.dbCPU, r.selfCPU
			}
			b.ReportMetric(rate, "serve-deliveries/s")
			b.ReportMetric(plain, "plain-posts/s")
			b.ReportMetric(rate/plain, "ratio")
			b.ReportMetric(serveCPU, "serve-cpu-µs/delivery")
			b.ReportMetric(selfCPU, "bench-cpu-µs/delivery")
			if c.pg {
				b.ReportMetric(dbCPU, "pg-cpu-µs/delivery")
			}
		})
	}
}

type serveRunResult struct{ rate, serveCPU, dbCPU, selfCPU float64 }

// serveRun starts nodes serve processes on dbURL, publishes events through them from
// concurrency goroutines and waits until the receiver has every one.
func serveRun(b *testing.B, dbURL string, nodes, events, concurrency int) serveRunResult {
	var (
		mu   sync.Mutex
		seen = map[string]bool{}
		all  = make(chan struct{})
	)
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("webhook-id")
		mu.Lock()
		if !seen[id] {
			seen[id] = true
			if len(seen) == events {
				close(all)
			}
		}
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	defer rc.Close()
	procs := make([]*serveProcess, nodes)
	for i := range procs {
		id := fmt.Sprintf("bench-%d", i)
		procs[i] = spawnServe(b, dbURL, []string{"--node-id", id, "--log-level", "warn"})
	}
	for _, p := range procs {
		p.awaitListening()
	}
	a := procs[0].account()
	if code, raw := procs[0].do("POST", "/api/v1/webhooks", a.APIToken, map[string]any{"url": rc.URL + "/hook",
		"policy": map[string]any{"allowHttp": true, "maxInFlight": 1000}}, nil); code != http.StatusCreated {
		b.Fatalf("create endpoint: %d %s", code, raw)
	}
	pub := &publisher{t: b, client: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: concurrency}},
		nodes: procs, token: a.APIToken, down: make([]atomic.Bool, nodes)}
	defer pub.client.CloseIdleConnections()
	cpuBefore, dbBefore, selfBefore := processesCPU(procs), postgresCPU(), selfCPU()
	start := time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	for range concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1)) - 1; i < events; i = int(next.Add(1)) - 1 {
				pub.publish(i)
			}
		}()
	}
	wg.Wait()
	if n := pub.failed.Load(); n > 0 {
		b.Fatalf("%d events could not be published", n)
	}
	select {
	case <-all:
	case <-time.After(5 * time.Minute):
		b.Fatalf("the receiver did not get every event")
	}
	elapsed := time.Since(start)
	per := func(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) / float64(events) }
	res := serveRunResult{rate: float64(events) / elapsed.Seconds(), serveCPU: per(processesCPU(procs) - cpuBefore),
		dbCPU: per(postgresCPU() - dbBefore), selfCPU: per(selfCPU() - selfBefore)}
	for _, p := range procs {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
	}
	return res
}

// processesCPU is the CPU time (user and system) the processes used so far.
func processesCPU(procs []*serveProcess) time.Duration {
	var total time.Duration
	for _, p := range procs {
		total += statCPU(filepath.Join("/proc", strconv.Itoa(p.cmd.Process.Pid), "stat"))
	}
	return total
}

// postgresCPU is the CPU time the PostgreSQL processes of this machine used so far
// (0 where /proc is not there).
func postgresCPU() time.Duration {
	entries, _ := os.ReadDir("/proc")
	var total time.Duration
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		path := filepath.Join("/proc", e.Name(), "stat")
		if stat, err := os.ReadFile(path); err == nil && strings.Contains(string(stat), "(postgres") {
			total += statCPU(path)
		}
	}
	return total
}

// statCPU reads utime and stime from a /proc/<pid>/stat file.
func statCPU(path string) time.Duration {
	stat, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	s := string(stat)
	end := strings.LastIndexByte(s, ')')
	if end < 0 {
		return 0
	}
	fields := strings.Fields(s[end+1:])
	if len(fields) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(fields[11], 10, 64)
	k, _ := strconv.ParseInt(fields[12], 10, 64)
	return time.Duration(u+k) * 10 * time.Millisecond // USER_HZ is 100 on Linux
}

// selfCPU is this process's CPU time so far.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
