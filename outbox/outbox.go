package outbox

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
	"github.com/switchboard-voice/switchboard/outbox/internal/dispatch"
	"github.com/switchboard-voice/switchboard/outbox/internal/policy"
	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
)

// Outbox is the engine: the library API over a Store plus the background services
// (dispatcher, reaper, retention purge) that Start runs and Close stops.
type Outbox struct {
	cfg   Config
	store outboxdriver.Store
	log   zerolog.Logger

	// wake nudges the dispatcher after a publish, a completion or a resume.
	wake chan struct{}
	// disp is the running dispatcher (nil before Start): Publish hands it new
	// deliveries directly while it has idle workers.
	disp atomic.Pointer[dispatch.Dispatcher]
	// clients holds the copy that follows no redirect of each client
	// Config.HTTPClientFor gave (*http.Client → *http.Client).
	clients sync.Map

	// filters and catalog cache what publishes read of endpoint filters and of the
	// event-type catalog.
	filters filters
	catalog schemas

	mu      sync.Mutex
	started bool
	closed  bool
	run     context.Context    // the services': Close cancels it (stop) to stop claiming
	stop    context.CancelFunc // stops claiming and the periodic services
	abort   context.CancelFunc // cancels attempts in flight
	done    chan struct{}      // closed when every service has returned
}

// Open validates cfg and returns an Outbox on cfg.Store. It starts nothing: call
// Start to begin delivering. Publishing works before Start (deliveries wait). A bad
// cfg is an error joining a *ValidationError per bad field; an ended ctx is its
// error.
func Open(ctx context.Context, cfg Config) (*Outbox, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cfg = cfg.WithDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	// Redirects are never followed (docs/outbox.md §2 step 3), whatever client the caller
	// gave: a copy of it returns the 3xx as the answer.
	cfg.HTTPClient = noRedirects(cfg.HTTPClient)
	return &Outbox{cfg: cfg, store: checkedStore{s: cfg.Store, box: cfg.Secrets}, log: cfg.Logger, wake: make(chan struct{}, 1)}, nil
}

// noRedirects is a copy of c that returns a 3xx as the answer.
func noRedirects(c *http.Client) *http.Client {
	client := *c
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &client
}

// client is the client of an attempt to ep: Config.HTTPClientFor's choice, made not
// to follow redirects (one copy per client given), or Config.HTTPClient.
func (o *Outbox) client(ep Endpoint) *http.Client {
	if o.cfg.HTTPClientFor == nil {
		return o.cfg.HTTPClient
	}
	c := o.cfg.HTTPClientFor(ep)
	if c == nil {
		return o.cfg.HTTPClient
	}
	if copied, ok := o.clients.Load(c); ok {
		return copied.(*http.Client)
	}
	copied, _ := o.clients.LoadOrStore(c, noRedirects(c))
	return copied.(*http.Client)
}

// Start runs the dispatcher, the reaper and the retention purge until Close. The
// services see ctx's values but not its end: Close stops them. Calling it twice is an
// error, and after Close it is ErrClosed.
func (o *Outbox) Start(ctx context.Context) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return ErrClosed
	}
	if o.started {
		return fmt.Errorf("outbox: already started")
	}
	o.started = true
	tuneGC(o.cfg.GCPercent)
	runCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	attemptCtx, abort := context.WithCancel(context.WithoutCancel(ctx))
	o.run, o.stop, o.abort, o.done = runCtx, stop, abort, make(chan struct{})
	dc := o.dispatchConfig()
	if w, ok := o.cfg.Store.(outboxdriver.Waker); ok {
		dc.Wakeups = w.Wakeups(runCtx)
	}
	d := dispatch.New(dc, attemptCtx)
	o.disp.Store(d)
	var wg sync.WaitGroup
	wg.Add(3)
	go func() { defer wg.Done(); d.Run(runCtx) }()
	go func() { defer wg.Done(); o.every(runCtx, o.cfg.ReapInterval, o.reapOnce) }()
	go func() { defer wg.Done(); o.every(runCtx, o.cfg.PurgeInterval, o.purgeOnce) }()
	go func() { wg.Wait(); close(o.done) }()
	return nil
}

// Close stops claiming, waits up to Config.ShutdownTimeout (or ctx's deadline) for
// attempts in flight to be recorded, cancels the rest and releases their deliveries
// (due again at once, no attempt used), and returns. It is safe before Start and when
// called twice. It does not close the Store, and the methods that only read or
// write it still work: an event published after Close is stored, and delivered by
// the next Outbox started on the same store.
func (o *Outbox) Close(ctx context.Context) error {
	o.mu.Lock()
	if o.closed {
		o.mu.Unlock()
		return nil
	}
	o.closed = true
	started := o.started
	o.mu.Unlock()
	if !started {
		return nil
	}
	o.stop()
	timer := time.NewTimer(o.cfg.ShutdownTimeout)
	defer timer.Stop()
	select {
	case <-o.done:
		o.abort()
		return nil
	case <-timer.C:
	case <-ctx.Done():
	}
	o.abort()
	<-o.done
	return nil
}

// every runs fn at once and then every interval until ctx ends.
func (o *Outbox) every(ctx context.Context, interval time.Duration, fn func(context.Context)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		fn(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// nudge wakes the dispatcher without blocking.
func (o *Outbox) nudge() {
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

// now is the engine's time, truncated to microseconds so that what is stored and what
// is returned compare equal in every store.
func (o *Outbox) now() time.Time { return dispatch.Now(o.cfg.Clock) }

// dispatchConfig is what the dispatcher takes of the outbox.
func (o *Outbox) dispatchConfig() dispatch.Config {
	return dispatch.Config{
		Store: o.store, Workers: o.cfg.Workers, BatchSize: o.cfg.BatchSize, LeaseDuration: o.cfg.LeaseDuration,
		PollInterval: o.cfg.PollInterval, Clock: o.cfg.Clock, Rand: o.cfg.Rand, Logger: o.log,
		Attempt: o.attempt, Observe: o.cfg.Observe, Wake: o.wake,
		Notify: o.notify,
	}
}

// notify hands the owner's notice of a pause, disable or removal to Config.Notify.
func (o *Outbox) notify(e AuditEntry, url string) {
	o.cfg.Notify(Notice{Account: e.Account, EndpointID: e.EndpointID, URL: url, Action: e.Action, Actor: e.Actor, Reason: e.Reason, At: e.At})
}

// policyOf resolves an endpoint's policy (policy.Of).
func (o *Outbox) policyOf(ep Endpoint) policy.Policy { return policy.Of(ep, o.log) }
