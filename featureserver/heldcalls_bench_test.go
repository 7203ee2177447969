package featureserver

import (
	"context"
	"flag"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/callctl"
	"github.com/switchboard-voice/switchboard/featureserver/internal/calls"
	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore"
	"github.com/switchboard-voice/switchboard/internal/testkit"
)

// The figures are for 60-second calls (-held-call-seconds 60); CI's single
// run of every benchmark holds shorter ones.
var (
	heldCallSeconds = flag.Int("held-call-seconds", 2, "length of each call of BenchmarkHeldCalls, in seconds")
	heldCalls       = flag.Int("held-calls", 200, "concurrent calls of BenchmarkHeldCalls")
)

// pauseApp is a minimal WebSocket application: session:new is acked with a pause of
// the given length and a hangup.
// Each session:new is signalled on sessions.
func pauseApp(b *testing.B, seconds int, sessions chan<- struct{}) string {
	verbs := fmt.Sprintf(`[{"verb":"pause","length":%d},{"verb":"hangup"}]`, seconds)
	srv := httptest.NewServer(testkit.JambonzWSApp(func(msgType, msgID string) []string {
		if msgType != "session:new" {
			return nil
		}
		sessions <- struct{}{}
		return []string{fmt.Sprintf(`{"type":"ack","msgid":%q,"data":%s}`, msgID, verbs)}
	}))
	b.Cleanup(srv.Close)
	return "ws" + strings.TrimPrefix(srv.URL, "http")
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// inUse is the heap and goroutine stacks in use, after a collection.
func inUse() (uint64, uint64) {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse + m.StackInuse, m.TotalAlloc
}

// BenchmarkHeldCalls holds N concurrent calls of S seconds against a minimal
// WebSocket application on a node (the wall clock: each call lasts S seconds), and
// runs the same calls as simulate does (the simulated clock: the pause takes no
// time), interleaved. It reports the node's memory per live call and CPU per
// call-second, simulate's CPU per simulated call-second and allocations per call, and
// the ratio of the CPU figures.
func BenchmarkHeldCalls(b *testing.B) {
	n, secs := *heldCalls, *heldCallSeconds
	sessions := make(chan struct{}, n)
	app := pauseApp(b, secs, sessions)
	cfg := Config{Listen: "127.0.0.1:0", DatabaseURL: "sqlite:" + filepath.Join(b.TempDir(), "node.db"), MaxCalls: n + 10}
	cfg.EgressAllow, _ = parseEgressAllow(EnvEgressAllow, "127.0.0.0/8")
	node, err := newNode(context.Background(), cfg, NodeOptions{}, nodeHooks{})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- node.Run(ctx, nil) }()
	defer func() {
		cancel()
		<-ran
	}()
	acct := nodestore.Account{Sid: nodestore.NewSid(), Name: "bench", WebhookSecret: "s", CreatedAt: time.Now().UTC()}
	if err := node.store.PutAccount(context.Background(), nodestore.PutAccountParams{Account: acct}); err != nil {
		b.Fatal(err)
	}
	hook, err := calls.ParseHook(nodestore.HookSpec{URL: app})
	if err != nil {
		b.Fatal(err)
	}
	network := NewCallNetwork(cfg.CallControl.WithDefaults(), callControlRules(cfg.WithDefaults()), node.log)
	defer network.CloseIdleConnections()

	var nodeCPU, simCPU time.Duration
	var nodeBytes, nodeAlloc, simAlloc uint64
	b.ResetTimer()
	for range b.N {
		// The node: N calls held for S seconds each.
		base, alloc0 := inUse()
		cpu0 := cpuTime()
		sids := make([]string, n)
		for i := range n {
			if sids[i], err = node.calls.Start(ctx, calls.Request{Account: acct, CallHook: hook, From: "a", To: "b"}); err != nil {
				b.Fatal(err)
			}
		}
		// Measured once every call is in session: its pause began on the wall clock.
		for range n {
			<-sessions
		}
		held, _ := inUse()
		for _, sid := range sids {
			<-node.calls.Ended(sid)
		}
		_, alloc1 := inUse()
		nodeCPU += cpuTime() - cpu0
		if held > base {
			nodeBytes += (held - base) / uint64(n)
		}
		nodeAlloc += (alloc1 - alloc0) / uint64(n)

		// simulate: the same calls on the simulated clock.
		_, alloc0 = inUse()
		cpu0 = cpuTime()
		var wg sync.WaitGroup
		go func() {
			for range n {
				<-sessions
			}
		}()
		for range n {
			wg.Go(func() {
				o := network.CallOptions(app)
				if _, err := callctl.Run(context.Background(), o); err != nil {
					b.Error(err)
				}
			})
		}
		wg.Wait()
		simCPU += cpuTime() - cpu0
		_, alloc1 = inUse()
		simAlloc += (alloc1 - alloc0) / uint64(n)
	}
	callSeconds := float64(b.N * n * secs)
	b.ReportMetric(float64(nodeBytes)/float64(b.N), "node-B/live-call")
	b.ReportMetric(float64(nodeAlloc)/float64(b.N), "node-alloc-B/call")
	b.ReportMetric(float64(nodeCPU.Microseconds())/callSeconds, "node-cpu-µs/call-s")
	b.ReportMetric(float64(simAlloc)/float64(b.N), "sim-alloc-B/call")
	b.ReportMetric(float64(simCPU.Microseconds())/callSeconds, "sim-cpu-µs/call-s")
	b.ReportMetric(float64(nodeCPU)/float64(simCPU), "node/sim-cpu")
}
