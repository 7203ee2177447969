package featureserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/rs/zerolog"

	"github.com/switchboard-voice/switchboard/callctl"
	"github.com/switchboard-voice/switchboard/outbox"
	"github.com/switchboard-voice/switchboard/outbox/outboxnotify"
	"github.com/switchboard-voice/switchboard/outbox/sqlitestore"
	"github.com/switchboard-voice/switchboard/transport"
)

// Node is a running feature server: API, call manager, metrics and health.
type Node struct {
	cfg     Config
	log     zerolog.Logger
	store   *Store
	outbox  *outbox.Outbox
	obStore *sqlitestore.Store
	notices *outboxnotify.Notifier // owners' notices of paused, disabled, removed endpoints
	calls   *CallManager
	metrics *Metrics
	server  *http.Server
	ready   atomic.Bool
	version string
	bg      sync.WaitGroup // side work (alerts stored off the dispatcher)
}

// NodeOptions are what a node needs besides its Config.
type NodeOptions struct {
	// Version is reported in the OpenAPI document.
	Version string
	// Bootstrap, when set, is applied to the database at start (see Bootstrap).
	Bootstrap *Bootstrap
	// Logger is the node's logger; every line about a call carries its call_sid.
	Logger zerolog.Logger
}

// NewNode opens the node's database and applies the bootstrap; nothing listens yet.
func NewNode(ctx context.Context, cfg Config, opts NodeOptions) (*Node, error) {
	loc, err := ParseDatabaseURL(cfg.DatabaseURL)
	if err != nil {
		return nil, err
	}
	store, err := OpenStore(ctx, loc)
	if err != nil {
		return nil, err
	}
	if opts.Bootstrap != nil {
		if err := opts.Bootstrap.Apply(ctx, store); err != nil {
			store.Close()
			return nil, err
		}
	}
	if n, err := store.InterruptActiveCalls(ctx, endInterrupted); err != nil {
		store.Close()
		return nil, fmt.Errorf("recording calls interrupted by the previous run: %w", err)
	} else if n > 0 {
		opts.Logger.Warn().Int("calls", n).Msg("calls left active by the previous run recorded as ended (node-restart)")
	}
	n := &Node{cfg: cfg, log: opts.Logger, store: store, metrics: NewMetrics(), version: opts.Version}
	status := newStatusPublisher(opts.Logger, store)
	if n.notices, err = n.newNotifier(); err != nil {
		store.Close()
		return nil, err
	}
	if err := n.openOutbox(ctx, loc, status); err != nil {
		store.Close()
		return nil, err
	}
	n.notices.Start(n.outbox)
	n.calls = NewCallManager(cfg, store, n.metrics, status.forCall, opts.Logger)
	n.calls.statusDeliveries, n.calls.forgetStatus = status.statusDeliveriesOf, status.forgetDeliveries
	mux := http.NewServeMux()
	if _, err := newAPI(mux, store, n.calls, cfg.AdminToken, opts.Version, opts.Logger, n.registerWebhookAPI); err != nil {
		n.closeStores()
		return nil, err
	}
	mux.Handle("GET /metrics", promhttp.HandlerFor(n.metrics.Registry, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { writeHealth(w, true, "ok") })
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		if !n.ready.Load() {
			writeHealth(w, false, "draining")
			return
		}
		if err := store.db.PingContext(r.Context()); err != nil {
			writeHealth(w, false, "database unavailable")
			return
		}
		writeHealth(w, true, "ready")
	})
	n.server = &http.Server{
		Handler:           defaultJSON(problemFallback(mux)),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
	}
	return n, nil
}

// openOutbox opens the outbox on the node's database file. Status hooks are
// application hooks, so the outbox dials with the call-control egress rules (private
// addresses allowed, the node's allow-list applied), not the public-only default, and
// builds its requests as jambonz status hooks (statusPublisher.dressRequest).
func (n *Node) openOutbox(ctx context.Context, loc DatabaseLocation, status *statusPublisher) error {
	st, err := sqlitestore.Open(ctx, loc.Path, sqlitestore.Options{})
	if err != nil {
		return fmt.Errorf("outbox store: %w", err)
	}
	rules := callControlRules(n.cfg)
	// A status receiver takes up to its endpoint's in-flight cap (10 under the standard
	// profile) at once: keep that many connections to it rather than dial each time.
	client := transport.NewHTTPClient(rules, transport.ClientOptions{ConnectTimeout: n.cfg.CallControl.HTTPTimeout, MaxIdleConnsPerHost: 16})
	ob, err := outbox.Open(ctx, outbox.Config{
		Store: st, Egress: &rules, HTTPClient: client, Renderer: renderStatus, Request: status.dressRequest, Logger: n.log,
		Notify:    n.notices.Notify,
		UserAgent: n.cfg.CallControl.UserAgent,
		// Deliveries still in flight at shutdown are released (retried at the next
		// start) after a short wait, so that a node without calls stops promptly.
		ShutdownTimeout: 2 * time.Second,
		Observe: func(d outbox.Delivery, a outbox.Attempt) {
			n.metrics.observeDelivery(d, a)
			n.alertFailedStatus(d, a, status)
		},
	})
	if err != nil {
		st.Close()
		return fmt.Errorf("outbox: %w", err)
	}
	status.ob = ob
	n.outbox, n.obStore = ob, st
	n.metrics.watchStore(st.Stats)
	return nil
}

// alertFailedStatus raises an alert on the account when a call status notification
// is given up (docs/call-control.md §6: a failed status hook is logged and alerted): d is
// the delivery as the attempt a left it.
func (n *Node) alertFailedStatus(d outbox.Delivery, a outbox.Attempt, status *statusPublisher) {
	if d.EventType != CallStatusEvent || (d.Status != outbox.DeliveryFailed && d.Status != outbox.DeliveryDead) {
		return
	}
	// Observe must not block the dispatcher: the rest happens on the side.
	n.bg.Add(1)
	go func() {
		defer n.bg.Done()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		alertType := callctl.AlertWebhookFailure
		switch a.Class {
		case outbox.ClassNetwork, outbox.ClassTimeout, outbox.ClassEgressRefused:
			alertType = callctl.AlertWebhookConnectionFailure
		}
		alert := Alert{AccountSid: d.Account, Type: string(alertType), CallSid: callSidOf(d.EventID), URL: status.urlOf(d.EndpointID),
			Detail: fmt.Sprintf("status hook: delivery %s %s after %d attempt(s): %s %s", d.ID, d.Status, d.Attempts, a.Class, a.Error),
			Time:   time.Now().UTC()}
		if err := n.store.AddAlert(ctx, alert); err != nil {
			n.log.Error().Err(err).Msg("storing a status hook alert failed")
			return
		}
		n.metrics.alerts.WithLabelValues(alert.Type).Inc()
	}()
}

func writeHealth(w http.ResponseWriter, ok bool, status string) {
	w.Header().Set("Content-Type", "application/json")
	if !ok {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	fmt.Fprintf(w, "{\"status\":%q}\n", status)
}

// Run listens on cfg.Listen (or ln when not nil) until ctx ends, then drains: it
// stops taking calls (readyz answers 503, new calls 503), lets active calls finish
// up to the drain timeout, ends the rest with ReasonNodeShutdown, and closes.
// onListening, when set, is called with the bound address once the node listens.
func (n *Node) Run(ctx context.Context, onListening func(net.Addr)) error {
	ln, err := net.Listen("tcp", n.cfg.Listen)
	if err != nil {
		n.closeStores()
		return fmt.Errorf("listen on %s (%s): %w", n.cfg.Listen, EnvListen, err)
	}
	// Not ctx: the outbox keeps delivering while calls drain, until Close.
	if err := n.outbox.Start(context.Background()); err != nil {
		ln.Close()
		n.closeStores()
		return fmt.Errorf("starting the outbox: %w", err)
	}
	n.ready.Store(true)
	n.log.Info().Str("listen", ln.Addr().String()).Str("database", n.cfg.DatabaseURL).Msg("switchboard node listening")
	if onListening != nil {
		onListening(ln.Addr())
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- n.server.Serve(ln) }()
	select {
	case err := <-serveErr:
		_ = n.outbox.Close(context.Background())
		n.closeStores()
		return err
	case <-ctx.Done():
	}
	n.ready.Store(false)
	n.log.Info().Int("active_calls", n.calls.Active()).Dur("drain_timeout", n.cfg.DrainTimeout).Msg("shutting down: draining calls")
	// The API keeps serving while calls drain, so their state stays readable.
	n.calls.Drain(n.cfg.DrainTimeout)
	// The calls' last status notifications are stored; deliveries in flight finish
	// (or are released for the next run).
	if err := n.outbox.Close(context.Background()); err != nil {
		n.log.Error().Err(err).Msg("closing the outbox")
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err = n.server.Shutdown(shutdownCtx)
	if e := <-serveErr; !errors.Is(e, http.ErrServerClosed) && err == nil {
		err = e
	}
	if cerr := n.closeStores(); err == nil {
		err = cerr
	}
	n.log.Info().Msg("node stopped")
	return err
}

// defaultJSON treats a request body without a Content-Type as JSON, as jambonz-style
// API clients (and curl users) often omit it; any other declared type is still
// checked and refused with 415 when it is not JSON.
func defaultJSON(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength != 0 && r.Header.Get("Content-Type") == "" {
			r.Header.Set("Content-Type", "application/json")
		}
		next.ServeHTTP(w, r)
	})
}

// problemFallback answers requests that match no route (404) or no method of a route
// (405) with an RFC 9457 problem document instead of ServeMux's plain text.
func problemFallback(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h, pattern := mux.Handler(r)
		if pattern != "" {
			mux.ServeHTTP(w, r)
			return
		}
		// Let ServeMux decide between 404 and 405 (and the Allow header), then
		// replace its body.
		rec := &statusOnly{header: http.Header{}}
		h.ServeHTTP(rec, r)
		if allow := rec.header.Get("Allow"); allow != "" {
			w.Header().Set("Allow", allow)
		}
		detail := "no such resource: " + r.URL.Path
		if rec.status == http.StatusMethodNotAllowed {
			detail = r.Method + " is not allowed on " + r.URL.Path
		}
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(rec.status)
		_ = json.NewEncoder(w).Encode(map[string]any{"title": http.StatusText(rec.status), "status": rec.status, "detail": detail})
	})
}

// statusOnly records the status and headers a handler writes, and drops its body.
type statusOnly struct {
	header http.Header
	status int
}

func (s *statusOnly) Header() http.Header { return s.header }
func (s *statusOnly) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
}
func (s *statusOnly) Write(b []byte) (int, error) {
	s.WriteHeader(http.StatusOK)
	return len(b), nil
}

func (n *Node) closeStores() error {
	ctx, cancel := context.WithTimeout(context.Background(), noticeTimeout)
	defer cancel()
	if err := n.notices.Close(ctx); err != nil {
		n.log.Error().Err(err).Msg("owners' notices still queued at shutdown were not sent")
	}
	n.bg.Wait()
	return errors.Join(n.obStore.Close(), n.store.Close())
}
