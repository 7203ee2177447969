package callctl_test

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/switchboard-voice/switchboard/callctl"
	"github.com/switchboard-voice/switchboard/transport"
	"github.com/switchboard-voice/switchboard/transport/wsclient"
)

func benchCallOptions(url string) (callctl.Options, func()) {
	httpClient := transport.NewHTTPClient(transport.CallControlRules(true), transport.ClientOptions{})
	return callctl.Options{
		AppURL:      url,
		WebSocket:   wsclient.Options{HTTPClient: httpClient, HandshakeTimeout: 30 * time.Second},
		AckTimeout:  time.Minute,
		IdleLimit:   10 * time.Minute,
		EgressRules: transport.CallControlRules(true),
	}, httpClient.CloseIdleConnections
}

// heapAndStacks measures after a few collections: a collection shrinks a
// goroutine stack that uses under a quarter of it by half, so a stack grown during
// the call's setup (dialing) returns to its steady size over a few cycles, as it
// does in a long-running node.
func heapAndStacks() (heap, stacks, goroutines uint64) {
	for range 6 {
		runtime.GC()
	}
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc, m.StackInuse, uint64(runtime.NumGoroutine())
}

// BenchmarkLiveCalls holds n calls live at once against a minimal loopback
// WebSocket app (in its own process): each has its socket open and waits for a
// command. It reports the node's heap and goroutine stacks per live call, and the
// same for n bare WebSocket connections to the same app (the baseline: what the
// socket alone costs), with the ratio.
func BenchmarkLiveCalls(b *testing.B) {
	if limit := raiseFileLimit(); limit < 12000 {
		b.Logf("RLIMIT_NOFILE is %d: large sizes may fail", limit)
	}
	addr := benchApp(b)
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for range b.N {
				rawHeap, rawStack, rawG := liveRawSockets(b, addr, n)
				callHeap, callStack, callG, setup := liveCalls(b, addr, n)
				b.ReportMetric(float64(callG)/float64(n), "goroutines/call")
				b.ReportMetric(float64(rawG)/float64(n), "goroutines/rawsocket")
				b.ReportMetric(float64(callHeap)/float64(n), "heapB/call")
				b.ReportMetric(float64(callStack)/float64(n), "stackB/call")
				b.ReportMetric(float64(rawHeap)/float64(n), "heapB/rawsocket")
				b.ReportMetric(float64(rawStack)/float64(n), "stackB/rawsocket")
				b.ReportMetric(float64(callHeap+callStack)/float64(rawHeap+rawStack), "call/raw")
				b.ReportMetric(float64(n)/setup.Seconds(), "calls-started/s")
			}
		})
	}
}

// liveRawSockets opens n bare WebSocket connections (the session protocol not
// spoken) and measures what they hold.
func liveRawSockets(b *testing.B, addr string, n int) (heap, stacks, goroutines uint64) {
	hc := transport.NewHTTPClient(transport.CallControlRules(true), transport.ClientOptions{})
	defer hc.CloseIdleConnections()
	h0, s0, g0 := heapAndStacks()
	conns := make([]*websocket.Conn, 0, n)
	for range n {
		c, _, err := websocket.Dial(context.Background(), "ws://"+addr+"/ivr", &websocket.DialOptions{HTTPClient: hc, Subprotocols: []string{"ws.jambonz.org"}})
		if err != nil {
			b.Fatalf("raw dial %d: %v", len(conns), err)
		}
		// A reader, as every live connection needs one for pings and closes.
		go func() { _, _, _ = c.Read(context.Background()) }()
		conns = append(conns, c)
	}
	h1, s1, g1 := heapAndStacks()
	for _, c := range conns {
		_ = c.CloseNow()
	}
	return h1 - h0, s1 - s0, g1 - g0
}

// liveCalls starts n calls that stay live, measures, then hangs them all up.
func liveCalls(b *testing.B, addr string, n int) (heap, stacks, goroutines uint64, setup time.Duration) {
	o, closeIdle := benchCallOptions("ws://" + addr + "/wait")
	defer closeIdle()
	h0, s0, g0 := heapAndStacks()
	var wg sync.WaitGroup
	var failed atomic.Int32
	start := time.Now()
	const batch = 500 // the listen backlog is finite: ramp up in batches
	for i := 0; i < n; i += batch {
		for j := i; j < min(i+batch, n); j++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r, err := callctl.Run(context.Background(), o)
				if err != nil || r.Reason != callctl.ReasonAppHangup {
					failed.Add(1)
				}
			}()
		}
		if err := waitLive(addr, min(i+batch, n)); err != nil {
			b.Fatal(err)
		}
	}
	setup = time.Since(start)
	h1, s1, g1 := heapAndStacks()
	if _, err := appGet(addr, "/hangup"); err != nil {
		b.Fatal(err)
	}
	wg.Wait()
	if f := failed.Load(); f > 0 {
		b.Fatalf("%d of %d calls did not end with the app's hangup", f, n)
	}
	if err := waitLive(addr, 0); err != nil {
		b.Fatal(err)
	}
	return h1 - h0, s1 - s0, g1 - g0, setup
}

// BenchmarkCallsPerSecond runs complete IVR calls (session:new, say, gather,
// verb:hook, say, pause, say, hangup, call:status, close) against the example
// WebSocket app, 64 at a time, and compares with the baseline of bare WebSocket
// round trips (dial, one message each way, close).
func BenchmarkCallsPerSecond(b *testing.B) {
	addr := benchApp(b)
	b.Run("calls", func(b *testing.B) {
		o, closeIdle := benchCallOptions("ws://" + addr + "/ivr")
		defer closeIdle()
		o.Script.Gathers = []callctl.GatherInput{{Digits: "1"}}
		var failed atomic.Int32
		b.SetParallelism(32) // × GOMAXPROCS (2) = 64 calls at once
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				r, err := callctl.Run(context.Background(), o)
				if err != nil || r.Reason != callctl.ReasonAppHangup {
					failed.Add(1)
				}
			}
		})
		if failed.Load() > 0 {
			b.Fatalf("%d calls failed", failed.Load())
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
	})
	b.Run("raw-roundtrips", func(b *testing.B) {
		hc := transport.NewHTTPClient(transport.CallControlRules(true), transport.ClientOptions{})
		defer hc.CloseIdleConnections()
		b.SetParallelism(32)
		b.RunParallel(func(pb *testing.PB) {
			ctx := context.Background()
			for pb.Next() {
				c, _, err := websocket.Dial(ctx, "ws://"+addr+"/ivr", &websocket.DialOptions{HTTPClient: hc, Subprotocols: []string{"ws.jambonz.org"}})
				if err != nil {
					b.Error(err)
					return
				}
				_ = c.Write(ctx, websocket.MessageText, []byte(`{"type":"session:new","msgid":"1","call_sid":"x","data":{}}`))
				_, _, _ = c.Read(ctx)
				_ = c.Close(websocket.StatusNormalClosure, "")
			}
		})
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "roundtrips/s")
	})
}
