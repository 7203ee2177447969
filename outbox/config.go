package outbox

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"go.opentelemetry.io/otel/trace"

	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
	"github.com/switchboard-voice/switchboard/retry"
	"github.com/switchboard-voice/switchboard/transport"
)

// Config configures an Outbox. Zero values take the defaults documented per field.
type Config struct {
	// Store keeps everything: an *sqlitestore.Store, or any outboxdriver.Store that
	// passes the suite of outbox/outboxtest. Required.
	Store outboxdriver.Store
	// HTTPClient makes the attempts, one request per claim; Open uses a copy that
	// never follows redirects. Default: transport.NewHTTPClient(Egress, ...), which
	// checks every destination IP at dial time.
	HTTPClient *http.Client
	// HTTPClientFor, when set, picks the client of each attempt by its endpoint as it
	// is at attempt time: a program whose endpoints may reach different destinations
	// (a node dials the status hooks it manages under its call-control rules and
	// every other endpoint public-only: docs/outbox.md §6) gives each its own. A nil
	// answer means HTTPClient. Redirects are never followed, whatever the client.
	// It runs on the attempt's goroutine, several at once. Default none.
	HTTPClientFor func(Endpoint) *http.Client
	// ReadBack, when set, says whether the delivery log may keep what a destination
	// answered an attempt of ep: it is asked for each destination the attempt's
	// connections reached (transport.TracePeers: the host and the address), and when
	// it answers false for any of them, or a connection's destination cannot be told
	// (a client not of package transport), the attempt keeps its status, class and
	// timing only: no response body, and no error text, which can quote the answer
	// (one that is not HTTP, a TLS certificate's names). A node keeps the answers of
	// the status hooks it dials under its call-control rules only from addresses its
	// outbox's own rules admit (docs/outbox.md §7). It runs on the attempt's
	// goroutine, several at once. Default none: everything kept.
	ReadBack func(ep Endpoint, peer transport.Peer) bool
	// Secrets seals the endpoints' signing keys the store keeps and opens them when
	// read (docs/outbox.md §5). Default: kept in clear.
	Secrets SecretSealer
	// Egress are the egress rules of the default HTTPClient. Default
	// transport.PublicOnly(): loopback, private and special ranges are refused.
	Egress *transport.EgressRules
	// Clock tells the time of claims, attempts and decisions. Default the store's
	// clock when it keeps one (outboxdriver.Clocked: the PostgreSQL store's is the
	// database server's), the wall clock otherwise.
	Clock retry.Clock
	// Rand spreads jittered schedules. Default a math/rand/v2 source.
	Rand retry.Rand
	// Renderer builds each attempt's body. Default DefaultRenderer.
	Renderer Renderer
	// Request, when set, shapes each attempt's request after it is built and before
	// it is signed and sent: its method (GET or POST), Basic auth, headers of the
	// embedding program's own, such as another signature over r.Body() (Request). Its
	// ctx ends with the attempt's timeout. An error is a fault on our side: the
	// delivery is rescheduled after the policy's FaultRetry without using an attempt,
	// as for a Renderer's error. It runs on the attempt's goroutine, several at once.
	// Default none: a POST of the rendered body.
	Request func(ctx context.Context, r *Request) error
	// Notify receives pause, disable and removal notices after they are stored: the
	// outbox's own and an operator's (Pause, RemoveEndpoint). It is called from the
	// dispatcher's completer, or the operator's call: hand the notice off, do not block
	// (package outboxnotify sends them to an operational webhook and by e-mail).
	// Default: none (they are still in the audit log).
	Notify func(Notice)
	// Observe, when set, sees every attempt once it is recorded, as stored (its
	// Number set), with its delivery as that attempt left it: Status, Attempts and
	// NextAttemptAt are the decision's. For metrics (outcome, lateness At minus
	// ScheduledAt) and alerts. It must not block.
	Observe func(d Delivery, a Attempt)
	// Logger receives structured logs, among them a warn line for every failed attempt
	// (endpoint, URL, delivery, event, status, outcome, error, next attempt). Default:
	// the zero Logger, which discards them.
	Logger zerolog.Logger
	// UserAgent is sent with every attempt. Default "Switchboard-Outbox/1".
	UserAgent string
	// TracerProvider, when set, traces publishes and attempts (docs/outbox.md §8): a
	// span per publish, whose traceparent the event keeps, and a span per attempt in
	// that trace, whose traceparent the attempt sends. Default none: nothing is
	// traced and attempts carry no traceparent.
	TracerProvider trace.TracerProvider

	// Workers bounds concurrent attempts across all endpoints. Default 64.
	Workers int
	// BatchSize bounds the deliveries claimed at once. Default 100. A node holds at
	// most Workers+BatchSize leases: deliveries waiting for a worker, in an attempt,
	// or waiting to be recorded.
	BatchSize int
	// LeaseDuration is how long a claim holds a delivery before the reaper may take it
	// back. An attempt is cut at half the lease (whatever its policy's timeout), so a
	// live attempt is never reaped; keep it above twice the largest timeout in use
	// (60 s at most). At least 2 s. Default 2 min.
	LeaseDuration time.Duration
	// PollInterval is the longest the dispatcher waits before looking for due
	// deliveries again (it is woken earlier by publishes, completions and the earliest
	// due time). Default 1 s.
	PollInterval time.Duration
	// ReapInterval is how often expired leases are looked for. Default 15 s.
	ReapInterval time.Duration
	// Retention is how long events, deliveries and attempts are kept. Default 7 days.
	Retention time.Duration
	// PurgeInterval is how often the retention purge runs. Default 1 h.
	PurgeInterval time.Duration
	// PurgeBatch bounds the rows deleted by one purge statement. Default 1000.
	PurgeBatch int
	// ShutdownTimeout bounds how long Close waits for attempts in flight before it
	// cancels them and releases their deliveries. Default 10 s.
	ShutdownTimeout time.Duration
	// GCPercent is the garbage collector's target (GOGC) that Start sets for the
	// process, unless the program chose one (the GOGC environment variable, or
	// debug.SetGCPercent with a value other than 100 before Start). Default 400: the
	// heap may grow to five times what is live between collections, for fewer
	// collections a delivery. Set GOMEMLIMIT to bound the heap, or -1 to leave the
	// collector alone (docs/outbox.md §5, "Engine defaults").
	GCPercent int
}

// WithDefaults returns c with every zero value replaced by its default.
func (c Config) WithDefaults() Config {
	if c.Egress == nil {
		r := transport.PublicOnly()
		c.Egress = &r
	}
	if c.Clock == nil {
		if cs, ok := c.Store.(outboxdriver.Clocked); ok {
			c.Clock = cs.Clock()
		} else {
			c.Clock = retry.SystemClock{}
		}
	}
	if c.Rand == nil {
		c.Rand = &lockedRand{r: rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))}
	}
	if c.Renderer == nil {
		c.Renderer = DefaultRenderer
	}
	if c.Secrets == nil {
		c.Secrets = clearSecrets{}
	}
	if c.Notify == nil {
		c.Notify = func(Notice) {}
	}
	if c.UserAgent == "" {
		c.UserAgent = "Switchboard-Outbox/1"
	}
	setDefault(&c.Workers, 64)
	setDefault(&c.LeaseDuration, 2*time.Minute)
	if c.HTTPClient == nil {
		c.HTTPClient = transport.NewHTTPClient(*c.Egress, defaultClientOptions(c))
	}
	setDefault(&c.BatchSize, 100)
	setDefault(&c.PurgeBatch, 1000)
	setDefault(&c.PollInterval, time.Second)
	setDefault(&c.ReapInterval, 15*time.Second)
	setDefault(&c.Retention, 7*24*time.Hour)
	setDefault(&c.PurgeInterval, time.Hour)
	setDefault(&c.ShutdownTimeout, 10*time.Second)
	setDefault(&c.GCPercent, defaultGCPercent)
	return c
}

// defaultClientOptions shape the default HTTP client of a Config with its defaults.
func defaultClientOptions(c Config) transport.ClientOptions {
	return transport.ClientOptions{
		// The profile's timeout bounds connect and response together (the attempt's
		// context); the dialer's own bound must not cut a connect shorter, so it is
		// the longest an attempt may take.
		ConnectTimeout: c.LeaseDuration / 2,
		// As many idle connections per host as attempts can run at once: a busy
		// endpoint's connections are reused, not closed and dialled again.
		MaxIdleConnsPerHost: c.Workers,
	}
}

// lockedRand makes a math/rand/v2 source safe for the completer and tests alike.
type lockedRand struct {
	mu sync.Mutex
	r  *rand.Rand
}

func (l *lockedRand) Float64() float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.r.Float64()
}

func setDefault[T int | time.Duration](v *T, d T) {
	if *v == 0 {
		*v = d
	}
}

// validate reports every value out of range at once, each as a *ValidationError.
func (c Config) validate() error {
	checks := []struct {
		ok    bool
		field string
		why   string
	}{
		{c.Store != nil, "Config.Store", "required"},
		{c.Workers >= 1 && c.Workers <= 10000, "Config.Workers", "must be in [1, 10000]"},
		{c.BatchSize >= 1 && c.BatchSize <= 10000, "Config.BatchSize", "must be in [1, 10000]"},
		{c.PurgeBatch >= 1, "Config.PurgeBatch", "must be at least 1"},
		{c.LeaseDuration >= 2*time.Second, "Config.LeaseDuration", "must be at least 2 s"},
		{c.PollInterval > 0, "Config.PollInterval", "must be positive"},
		{c.ReapInterval > 0, "Config.ReapInterval", "must be positive"},
		{c.Retention >= time.Hour, "Config.Retention", "must be at least 1 h"},
		{c.PurgeInterval > 0, "Config.PurgeInterval", "must be positive"},
		{c.ShutdownTimeout > 0, "Config.ShutdownTimeout", "must be positive"},
		{c.GCPercent >= -1, "Config.GCPercent", "must be -1 (leave the collector alone) or a percent"},
	}
	var errs []error
	for _, ch := range checks {
		if !ch.ok {
			errs = append(errs, invalid(ch.field, "%s", ch.why))
		}
	}
	return errors.Join(errs...)
}
