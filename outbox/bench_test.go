package outbox_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/outbox"
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
// would; the -16pub figures use 16.
//
//	go test -run '^$' -bench DeliveryVsPlainHTTP -benchtime 3x ./outbox
//
// OUTBOX_SYNC=NORMAL runs the store with synchronous=NORMAL for comparison.
func BenchmarkDeliveryVsPlainHTTP(b *testing.B) {
	const (
		deliveries  = 3000
		concurrency = 16
	)
	var got atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		got.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	body, _ := outbox.DefaultRenderer(context.Background(), outbox.Event{ID: "evt_bench", Type: "call.status",
		CreatedAt: time.Now(), Data: json.RawMessage(`{"callSid":"CA0123456789abcdef","status":"completed"}`)},
		outbox.Endpoint{APIVersion: "v1"})

	var plainRate, outboxRate, outboxRate16, p99 float64
	for b.Loop() {
		got.Store(0)
		plainRate = plainPosts(b, srv.URL, body, deliveries, concurrency)
		got.Store(0)
		var lat []time.Duration
		outboxRate, lat = outboxDeliveries(b, srv.URL, &got, deliveries, concurrency, 4*concurrency, 0)
		slices.Sort(lat)
		p99 = float64(lat[len(lat)*99/100]) / float64(time.Millisecond)
		got.Store(0)
		outboxRate16, _ = outboxDeliveries(b, srv.URL, &got, deliveries, concurrency, concurrency, 0)
	}
	b.ReportMetric(outboxRate, "outbox-deliveries/s")
	b.ReportMetric(plainRate, "plain-posts/s")
	b.ReportMetric(outboxRate/plainRate, "ratio")
	b.ReportMetric(outboxRate16/plainRate, "ratio-16pub")
	b.ReportMetric(p99, "p99-lateness-ms")
}

// BenchmarkLatenessPaced publishes at a steady 1,000 events/s (below the saturation
// rate measured above) and reports the p50 and p99 lateness of attempts after their
// scheduled time: the delay the dispatcher adds when it is not behind.
func BenchmarkLatenessPaced(b *testing.B) {
	const (
		deliveries  = 3000
		concurrency = 16
		perSecond   = 1000
	)
	var got atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		got.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	var p50, p99 float64
	for b.Loop() {
		got.Store(0)
		_, lat := outboxDeliveries(b, srv.URL, &got, deliveries, concurrency, concurrency, perSecond)
		slices.Sort(lat)
		p50 = float64(lat[len(lat)/2]) / float64(time.Millisecond)
		p99 = float64(lat[len(lat)*99/100]) / float64(time.Millisecond)
	}
	b.ReportMetric(p50, "p50-lateness-ms")
	b.ReportMetric(p99, "p99-lateness-ms")
}

func plainPosts(b *testing.B, url string, body []byte, n, concurrency int) float64 {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: concurrency}}
	defer client.CloseIdleConnections()
	var next atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(n) {
				resp, err := client.Post(url, "application/json", bytes.NewReader(body))
				if err != nil {
					b.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
			}
		}()
	}
	wg.Wait()
	return float64(n) / time.Since(start).Seconds()
}

// outboxDeliveries publishes n events from publishers goroutines (paced to perSecond
// in all when it is not 0) to an outbox sending with concurrency workers, and returns
// the delivery rate and the lateness of every attempt.
func outboxDeliveries(b *testing.B, url string, got *atomic.Int64, n, concurrency, publishers, perSecond int) (float64, []time.Duration) {
	ctx := context.Background()
	st := openStore(b)
	var (
		mu  sync.Mutex
		lat = make([]time.Duration, 0, n)
	)
	ob, err := outbox.Open(ctx, outbox.Config{Store: st, Egress: loopbackRules(), Workers: concurrency,
		Observe: func(_ outbox.Delivery, a outbox.Attempt) {
			mu.Lock()
			lat = append(lat, a.At.Sub(a.ScheduledAt))
			mu.Unlock()
		}})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := ob.CreateEndpoint(ctx, outbox.EndpointSpec{Account: "bench", URL: url,
		// The endpoint's cap counts leases, which also cover deliveries queued for a
		// worker or awaiting their record; Workers bounds the requests in flight.
		Overrides: outbox.Overrides{AllowHTTP: ptr(true), MaxInFlight: ptr(8 * concurrency)}}); err != nil {
		b.Fatal(err)
	}
	if err := ob.Start(ctx); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = ob.Close(ctx) }()
	data := json.RawMessage(`{"callSid":"CA0123456789abcdef","status":"completed"}`)
	var next atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range publishers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1); i <= int64(n); i = next.Add(1) {
				if perSecond > 0 {
					time.Sleep(time.Until(start.Add(time.Duration(i) * time.Second / time.Duration(perSecond))))
				}
				if _, err := ob.Publish(ctx, outbox.Event{ID: fmt.Sprintf("evt_%d", i), Account: "bench",
					Type: "call.status", Data: data}); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	for got.Load() < int64(n) {
		time.Sleep(time.Millisecond)
	}
	rate := float64(n) / time.Since(start).Seconds()
	for { // every attempt recorded, for the lateness figures
		mu.Lock()
		done := len(lat) >= n
		mu.Unlock()
		if done {
			break
		}
		time.Sleep(time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	return rate, append([]time.Duration(nil), lat...)
}
