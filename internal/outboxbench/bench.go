package outboxbench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchboard-voice/switchboard/outbox"
	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
	"github.com/switchboard-voice/switchboard/outbox/sqlitestore"
	"github.com/switchboard-voice/switchboard/transport"
)

// Options shape one run. Zero values take the defaults given per field.
type Options struct {
	// Deliveries is how many events are published and how many plain posts are made.
	// Default 3000.
	Deliveries int
	// Concurrency is the HTTP requests in flight: the plain client's goroutines and
	// the outbox's Workers. Default 16.
	Concurrency int
	// Publishers is how many goroutines publish. Each Publish returns once its event
	// is durable, so one publisher has one event in a commit at a time. Default
	// 4×Concurrency.
	Publishers int
	// PerSecond paces publishing to this many events a second in all; 0 publishes as
	// fast as the publishers can.
	PerSecond int
	// Synchronous is the SQLite synchronous pragma: FULL (default: fsync on every
	// commit) or NORMAL.
	Synchronous string
	// Dir holds the database file; default a new temporary directory, removed after.
	Dir string
	// SkipPlain skips the plain client (Result.PlainPerSecond and Ratio stay 0).
	SkipPlain bool
	// OpenStore opens the store of one node on the database under test, with the
	// function that closes it. Default: the SQLite store on a fresh file in Dir, with
	// Synchronous.
	OpenStore func(ctx context.Context) (outboxdriver.Store, func() error, error)
	// BatchSize is the outbox's Config.BatchSize: deliveries claimed at once.
	// Default: the outbox's own default.
	BatchSize int
	// EndpointCap is the endpoint's MaxInFlight override: its deliveries leased at
	// once, across nodes. Default 8×Concurrency×Nodes, at most 1000.
	EndpointCap int
	// Nodes is how many outboxes share the database, each with a store of its own
	// (OpenStore), its dispatcher and Concurrency workers, the publishers spread over
	// them: nodes of one cluster, in one process. Default 1.
	Nodes int
}

// Result is what one run measured.
type Result struct {
	Options         Options
	PlainPerSecond  float64
	OutboxPerSecond float64
	// Ratio is OutboxPerSecond / PlainPerSecond.
	Ratio float64
	// Lateness of attempts after their scheduled time.
	LatenessP50, LatenessP99, LatenessMax time.Duration

	// Where the time went, for explaining the ratio. CPU is the process's CPU time
	// (user and system, the receiver's included) per plain post and per delivery, and
	// Cores that CPU over the phase's elapsed time; both stay zero where the platform
	// does not report it. A phase using every core is bound by CPU; one using less
	// waits on something serial.
	PlainCPU, OutboxCPU     time.Duration
	PlainCores, OutboxCores float64
	// Writer is the SQLite store's single writer during the outbox phase (see
	// sqlitestore.Stats), when the run is on one SQLite node (zero otherwise): WriterBusy is the fraction of the phase it spent in write
	// transactions, WriterCommitting the fraction in COMMIT; WritesPerTransaction
	// is how many writes each transaction grouped on average.
	WriterBusy, WriterCommitting float64
	WritesPerTransaction         float64
}

// WithDefaults returns o with every zero value replaced by its default.
func (o Options) WithDefaults() Options {
	if o.Deliveries == 0 {
		o.Deliveries = 3000
	}
	if o.Concurrency == 0 {
		o.Concurrency = 16
	}
	if o.Publishers == 0 {
		o.Publishers = 4 * o.Concurrency
	}
	if o.Nodes == 0 {
		o.Nodes = 1
	}
	if o.EndpointCap == 0 {
		o.EndpointCap = min(8*o.Concurrency*o.Nodes, 1000)
	}
	o.Synchronous = strings.ToUpper(o.Synchronous)
	if o.Synchronous == "" {
		o.Synchronous = "FULL"
	}
	return o
}

// Validate reports every value of o (with its defaults) out of range at once.
func (o Options) Validate() error {
	checks := []struct {
		ok  bool
		err error
	}{
		{o.Synchronous == "FULL" || o.Synchronous == "NORMAL", fmt.Errorf("synchronous must be FULL or NORMAL, got %q", o.Synchronous)},
		{o.Deliveries >= 1 && o.Deliveries <= 10_000_000, fmt.Errorf("deliveries must be in [1, 10000000], got %d", o.Deliveries)},
		{o.Concurrency >= 1 && o.Concurrency <= 10_000, fmt.Errorf("concurrency must be in [1, 10000], got %d", o.Concurrency)},
		{o.Publishers >= 1 && o.Publishers <= 100_000, fmt.Errorf("publishers must be in [1, 100000], got %d", o.Publishers)},
		{o.PerSecond >= 0, fmt.Errorf("per-second must not be negative, got %d", o.PerSecond)},
		{o.Nodes >= 1 && o.Nodes <= 64, fmt.Errorf("nodes must be in [1, 64], got %d", o.Nodes)},
		{o.BatchSize >= 0 && o.BatchSize <= 10_000, fmt.Errorf("batch must be in [0, 10000], got %d", o.BatchSize)},
		{o.EndpointCap >= 1 && o.EndpointCap <= 1000, fmt.Errorf("endpoint cap must be in [1, 1000], got %d", o.EndpointCap)},
	}
	var errs []error
	for _, c := range checks {
		if !c.ok {
			errs = append(errs, c.err)
		}
	}
	return errors.Join(errs...)
}

// eventData is the data of every event: a call status, as the feature server sends.
var eventData = json.RawMessage(`{"callSid":"CA0123456789abcdef","status":"completed"}`)

// Run measures the plain client, then the outbox, on one loopback receiver.
func Run(ctx context.Context, opts Options) (Result, error) {
	opts = opts.WithDefaults()
	if err := opts.Validate(); err != nil {
		return Result{}, fmt.Errorf("outboxbench: %w", err)
	}
	res := Result{Options: opts}
	rc, err := startReceiver()
	if err != nil {
		return res, err
	}
	defer rc.close()

	if !opts.SkipPlain {
		body, err := plainBody(ctx)
		if err != nil {
			return res, err
		}
		cpu, measured := processCPU()
		if res.PlainPerSecond, err = plainPosts(ctx, rc.url, body, opts.Deliveries, opts.Concurrency); err != nil {
			return res, err
		}
		if after, _ := processCPU(); measured {
			res.PlainCPU, res.PlainCores = perRequest(after-cpu, opts.Deliveries, res.PlainPerSecond)
		}
	}
	dir := opts.Dir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "switchboard-bench-"); err != nil {
			return res, err
		}
		defer os.RemoveAll(dir)
	}
	rc.got.Store(0)
	lat, err := outboxDeliveries(ctx, rc, filepath.Join(dir, fmt.Sprintf("bench-%d.db", time.Now().UnixNano())), opts, &res)
	if err != nil {
		return res, err
	}
	if res.PlainPerSecond > 0 {
		res.Ratio = res.OutboxPerSecond / res.PlainPerSecond
	}
	slices.Sort(lat)
	res.LatenessP50, res.LatenessP99, res.LatenessMax = lat[len(lat)/2], lat[len(lat)*99/100], lat[len(lat)-1]
	return res, nil
}

// perRequest is cpu spread over n requests made at rate a second, and the cores it
// kept busy.
func perRequest(cpu time.Duration, n int, rate float64) (time.Duration, float64) {
	elapsed := float64(n) / rate
	return cpu / time.Duration(n), cpu.Seconds() / elapsed
}

// receiver answers every POST with 204 and counts them.
type receiver struct {
	url string
	srv *http.Server
	got atomic.Int64
	// arrived is signalled (without blocking) on every request.
	arrived chan struct{}
}

func startReceiver() (*receiver, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("outboxbench: receiver: %w", err)
	}
	rc := &receiver{url: "http://" + ln.Addr().String() + "/hook", arrived: make(chan struct{}, 1)}
	rc.srv = &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		rc.got.Add(1)
		select {
		case rc.arrived <- struct{}{}:
		default:
		}
		w.WriteHeader(http.StatusNoContent)
	})}
	go func() { _ = rc.srv.Serve(ln) }()
	return rc, nil
}

func (rc *receiver) close() { _ = rc.srv.Close() }

// waitFor returns once the receiver has counted n requests.
func (rc *receiver) waitFor(ctx context.Context, n int64) error {
	for rc.got.Load() < n {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-rc.arrived:
		}
	}
	return nil
}

// Plain measures the plain client alone, as Run does (opts.Deliveries posts,
// opts.Concurrency in flight), on a receiver of its own: the baseline for measuring
// parts of the outbox separately in the same run.
func Plain(ctx context.Context, opts Options) (postsPerSecond float64, err error) {
	opts = opts.WithDefaults()
	if err := opts.Validate(); err != nil {
		return 0, fmt.Errorf("outboxbench: %w", err)
	}
	rc, err := startReceiver()
	if err != nil {
		return 0, err
	}
	defer rc.close()
	body, err := plainBody(ctx)
	if err != nil {
		return 0, err
	}
	return plainPosts(ctx, rc.url, body, opts.Deliveries, opts.Concurrency)
}

// plainBody is what the plain client posts: an event as the outbox renders it.
func plainBody(ctx context.Context) ([]byte, error) {
	return outbox.DefaultRenderer(ctx, outbox.Event{ID: "evt_bench", Type: "call.status",
		CreatedAt: time.Now(), Data: eventData}, outbox.Endpoint{APIVersion: "v1"})
}

// plainPosts posts body n times to url from concurrency goroutines and returns the
// rate.
func plainPosts(ctx context.Context, url string, body []byte, n, concurrency int) (float64, error) {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: concurrency}}
	defer client.CloseIdleConnections()
	start := time.Now()
	err := each(concurrency, n, func(int) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.Body.Close()
	})
	if err != nil {
		return 0, fmt.Errorf("outboxbench: plain client: %w", err)
	}
	return float64(n) / time.Since(start).Seconds(), nil
}

// each runs fn(i) for i in 1..n on workers goroutines, each taking the next i until
// none is left or its fn fails, and returns the failures.
func each(workers, n int, fn func(i int) error) error {
	var (
		next atomic.Int64
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1); i <= int64(n); i = next.Add(1) {
				if err := fn(int(i)); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// outboxDeliveries publishes opts.Deliveries events to one endpoint through
// opts.Nodes outboxes sharing one database (a fresh SQLite file at path unless
// opts.OpenStore says otherwise), and returns the lateness of every attempt. It sets
// res's delivery rate, from the first Publish to the last request received, and what
// the CPU and, on SQLite, the store's writer did meanwhile.
func outboxDeliveries(ctx context.Context, rc *receiver, path string, opts Options, res *Result) ([]time.Duration, error) {
	open := opts.OpenStore
	var sqlite *sqlitestore.Store
	if open == nil {
		open = func(ctx context.Context) (outboxdriver.Store, func() error, error) {
			st, err := sqlitestore.Open(ctx, path, sqlitestore.Options{Synchronous: opts.Synchronous})
			if err != nil {
				return nil, nil, err
			}
			if sqlite == nil {
				sqlite = st
			}
			return st, st.Close, nil
		}
	}
	var (
		mu  sync.Mutex
		lat = make([]time.Duration, 0, opts.Deliveries)
		// recorded is notified (without blocking) after each attempt Observe sees.
		recorded = make(chan struct{}, 1)
		nodes    []*outbox.Outbox
	)
	loopback := transport.PublicOnly()
	loopback.AllowLoopback = true
	for range opts.Nodes {
		st, closeStore, err := open(ctx)
		if err != nil {
			return nil, err
		}
		defer func() { _ = closeStore() }()
		ob, err := outbox.Open(ctx, outbox.Config{Store: st, Egress: &loopback, Workers: opts.Concurrency, BatchSize: opts.BatchSize,
			Observe: func(_ outbox.Delivery, a outbox.Attempt) {
				mu.Lock()
				lat = append(lat, a.At.Sub(a.ScheduledAt))
				mu.Unlock()
				select {
				case recorded <- struct{}{}:
				default:
				}
			}})
		if err != nil {
			return nil, err
		}
		defer func() { _ = ob.Close(context.Background()) }()
		nodes = append(nodes, ob)
	}
	allowHTTP, maxInFlight := true, opts.EndpointCap
	if _, err := nodes[0].CreateEndpoint(ctx, outbox.EndpointSpec{Account: "bench", URL: rc.url,
		// The endpoint's cap counts leases, which also cover deliveries queued for a
		// worker or awaiting their record; Workers bounds the requests in flight.
		Overrides: outbox.Overrides{AllowHTTP: &allowHTTP, MaxInFlight: &maxInFlight}}); err != nil {
		return nil, err
	}
	for _, ob := range nodes {
		if err := ob.Start(ctx); err != nil {
			return nil, err
		}
	}
	cpu, measured := processCPU()
	var writer sqlitestore.Stats
	if sqlite != nil {
		writer = sqlite.Stats()
	}
	start := time.Now()
	err := each(opts.Publishers, opts.Deliveries, func(i int) error {
		if opts.PerSecond > 0 {
			due := start.Add(time.Duration(i) * time.Second / time.Duration(opts.PerSecond))
			select {
			case <-ctx.Done():
			case <-time.After(time.Until(due)):
			}
		}
		_, err := nodes[i%len(nodes)].Publish(ctx, outbox.Event{ID: fmt.Sprintf("evt_%d", i), Account: "bench", Type: "call.status", Data: eventData})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("outboxbench: publish: %w", err)
	}
	if err := rc.waitFor(ctx, int64(opts.Deliveries)); err != nil {
		return nil, err
	}
	elapsed := time.Since(start)
	res.OutboxPerSecond = float64(opts.Deliveries) / elapsed.Seconds()
	if after, _ := processCPU(); measured {
		res.OutboxCPU, res.OutboxCores = perRequest(after-cpu, opts.Deliveries, res.OutboxPerSecond)
	}
	if sqlite != nil && opts.Nodes == 1 {
		w := sqlite.Stats()
		// A transaction is counted whole when it ends: one that began before the phase
		// could push a saturated writer past 1.
		res.WriterBusy = min(1, (w.Busy-writer.Busy).Seconds()/elapsed.Seconds())
		res.WriterCommitting = min(res.WriterBusy, (w.Committing-writer.Committing).Seconds()/elapsed.Seconds())
		if n := w.Transactions - writer.Transactions; n > 0 {
			res.WritesPerTransaction = float64(w.Writes-writer.Writes) / float64(n)
		}
	}
	// Every attempt recorded, for the lateness figures.
	for {
		mu.Lock()
		done := len(lat) >= opts.Deliveries
		mu.Unlock()
		if done {
			break
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-recorded:
		}
	}
	mu.Lock()
	defer mu.Unlock()
	return slices.Clone(lat), nil
}
