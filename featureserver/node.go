package featureserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/rs/zerolog"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/switchboard-voice/switchboard/callctl"
	"github.com/switchboard-voice/switchboard/featureserver/internal/authlimit"
	"github.com/switchboard-voice/switchboard/featureserver/internal/calls"
	"github.com/switchboard-voice/switchboard/featureserver/internal/console"
	"github.com/switchboard-voice/switchboard/featureserver/internal/metrics"
	"github.com/switchboard-voice/switchboard/featureserver/internal/nodeapi"
	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore"
	"github.com/switchboard-voice/switchboard/featureserver/internal/statushooks"
	"github.com/switchboard-voice/switchboard/fragment"
	"github.com/switchboard-voice/switchboard/internal/dburl"
	"github.com/switchboard-voice/switchboard/internal/secretbox"
	"github.com/switchboard-voice/switchboard/outbox"
	"github.com/switchboard-voice/switchboard/outbox/outboxnotify"
	"github.com/switchboard-voice/switchboard/retry"
	"github.com/switchboard-voice/switchboard/transport"
)

// Node is a running feature server: API, call manager, metrics and health.
type Node struct {
	cfg           Config
	shutdownGrace time.Duration
	log           zerolog.Logger
	store         nodestore.Store
	outbox        *outbox.Outbox
	db            *database
	// closeOutboxStore closes the outbox's store.
	closeOutboxStore func() error
	status           *statushooks.Publisher
	notices          *outboxnotify.Notifier // owners' notices of paused, disabled, removed endpoints
	calls            *calls.Manager
	metrics          *metrics.Metrics
	server           *http.Server
	ready            atomic.Bool
	version          string
	// tracing exports the node's spans; nil when it traces nothing (Config.Tracing).
	tracing  *sdktrace.TracerProvider
	resolver transport.Resolver // nil: the system's (nodeHooks.resolver)
	limiter  *authlimit.Limiter // failed authentication, per client and account
}

// NodeOptions are what a node needs besides its Config. Zero values take the
// defaults documented per field.
type NodeOptions struct {
	// Version is reported in the OpenAPI document. Default none.
	Version string
	// Bootstrap, when set, is applied to the database at start (see Bootstrap).
	// Default none.
	Bootstrap *Bootstrap
	// Logger is the node's logger; every line about a call carries its call_sid.
	// Default: the zero Logger, which discards them.
	Logger zerolog.Logger
}

// NewNode makes a node of cfg (its zero values taking their defaults): it opens the
// node's database (creating and migrating it as needed), applies opts.Bootstrap, and
// records as ended the calls a previous run left active (reason node-restart).
// Nothing listens and nothing is delivered until Run. It fails with an error
// wrapping ErrBadConfig (a *ConfigError per bad field) when cfg holds a value out of
// range, or with the database's or the bootstrap's error; then nothing is left open.
// ctx bounds the opening only.
func NewNode(ctx context.Context, cfg Config, opts NodeOptions) (*Node, error) {
	return newNode(ctx, cfg, opts, nodeHooks{})
}

// nodeHooks are how tests see what a node does without polling for it.
type nodeHooks struct {
	// wrapStore, when set, wraps the node's store (to see what it writes).
	wrapStore func(nodestore.Store) nodestore.Store
	// observe, when set, sees every outbox attempt once it is recorded.
	observe func(outbox.Delivery, outbox.Attempt)
	// shutdownGrace, when set, replaces shutdownGrace.
	shutdownGrace time.Duration
	// probeTimeout, when set, replaces the write probe's timeout (2 s), which a test
	// on a loaded machine must not race.
	probeTimeout time.Duration
	// probeInterval, when set, replaces the write probe's interval (probeInterval).
	probeInterval time.Duration
	// probed, when set, is told each write probe's outcome once it is recorded.
	probed func(error)
	// resolver, when set, resolves the host names of the outbox's deliveries (a
	// test's names that resolve where it says).
	resolver transport.Resolver
}

// The console's sessions end after consoleSessionIdle unused or consoleSessionLifetime
// after their sign-in (docs/architecture.md, package console).
const (
	consoleSessionIdle     = time.Hour
	consoleSessionLifetime = 12 * time.Hour
)

// writeTimeout bounds writing an answer, from the end of reading the request's
// headers (net/http's WriteTimeout).
const writeTimeout = 60 * time.Second

// shutdownGrace is how long a stopping node waits for the API's connections to
// close themselves (requests in flight to finish) before it closes them.
const shutdownGrace = 5 * time.Second

// newNode is NewNode with the hooks of tests.
func newNode(ctx context.Context, cfg Config, opts NodeOptions, hooks nodeHooks) (*Node, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	loc, err := parseDatabaseURL(cfg.DatabaseURL)
	if err != nil {
		return nil, err
	}
	n := &Node{cfg: cfg, log: opts.Logger, metrics: metrics.New(), version: opts.Version, shutdownGrace: shutdownGrace, resolver: hooks.resolver,
		limiter: authlimit.New(authlimit.Options{})}
	if hooks.shutdownGrace > 0 {
		n.shutdownGrace = hooks.shutdownGrace
	}
	secrets, err := parseSecretsKey("Config.SecretsKey", cfg.SecretsKey)
	if err != nil {
		return nil, err
	}
	if n.db, err = openDatabase(ctx, loc); err != nil {
		return nil, err
	}
	n.db.secrets = secrets
	opened, err := n.db.nodeStore(ctx)
	if err != nil {
		n.closeStores()
		return nil, err
	}
	h := n.db.health
	h.log, h.probed = opts.Logger, hooks.probed
	if hooks.probeTimeout > 0 {
		h.probeTimeout = hooks.probeTimeout
	}
	if hooks.probeInterval > 0 {
		h.interval = hooks.probeInterval
	}
	// A database whose secrets this node cannot open (encrypted, and no key or
	// another key given) would fail every request: refuse to start, naming the
	// variable.
	if _, err := opened.ListAccounts(ctx); errors.Is(err, secretbox.ErrNoKey) || errors.Is(err, secretbox.ErrUnknownKey) || errors.Is(err, secretbox.ErrCorrupt) {
		_ = opened.Close()
		n.closeStores()
		return nil, &ConfigError{Name: EnvSecretsKey, Value: "(hidden)",
			Accept: "the key the database's secrets are encrypted with (first, or after a new one): " + err.Error()}
	}
	n.store = withStaleTokens(opened)
	if hooks.wrapStore != nil {
		n.store = hooks.wrapStore(n.store)
	}
	store := n.store
	clock := retry.SystemClock{}
	if cfg.Outbox.Retention < longestProfileRun {
		n.log.Warn().Dur("retention", cfg.Outbox.Retention).Dur("longest_profile_run", longestProfileRun).
			Msg(EnvOutboxRetention + " is shorter than the longest run of the built-in profiles: deliveries still retrying past it are purged unsent")
	}
	if cfg.Tracing.Enabled() {
		if n.tracing, err = newTracerProvider(ctx, cfg.Tracing, opts.Version, cfg.Cluster.NodeID); err != nil {
			n.closeStores()
			return nil, err
		}
	}
	if opts.Bootstrap != nil {
		if err := opts.Bootstrap.apply(ctx, store, clock); err != nil {
			n.closeStores()
			return nil, err
		}
	}
	if n.notices, err = n.newNotifier(); err != nil {
		n.closeStores()
		return nil, err
	}
	if err := n.openOutbox(ctx, hooks.observe); err != nil {
		n.closeStores()
		return nil, err
	}
	n.notices.Start(n.outbox)
	n.calls, err = calls.New(calls.Options{
		Store: store, Network: accountsNetwork{newCallNetwork(cfg.CallControl, callControlRules(cfg), opts.Logger, n.tracerProvider()), webhookRules(cfg)},
		TracerProvider: n.tracerProvider(),
		MaxCalls:       cfg.MaxCalls, IdleLimit: cfg.CallIdleTimeout, Status: n.status,
		Limits:  calls.Limits{Duration: cfg.MaxCallDuration, Requests: cfg.MaxCallRequests, Events: cfg.MaxCallEvents},
		Metrics: n.metrics, Clock: clock, Logger: opts.Logger, Node: cfg.Cluster.NodeID,
		Writable: n.db.admit,
	})
	if err != nil {
		n.closeStores()
		return nil, err
	}
	if err := n.recoverCalls(ctx); err != nil {
		n.closeStores()
		return nil, err
	}
	mux := http.NewServeMux()
	noticeRules := webhookRules(cfg)
	if err := nodeapi.Register(mux, nodeapi.Options{Store: store, Calls: n.calls, AdminToken: cfg.AdminToken, Limiter: n.limiter,
		CheckNoticeURL: noticeRules.CheckURL, Mount: n.registerWebhookAPI, Version: opts.Version, Clock: clock, Logger: opts.Logger,
		Node: cfg.Cluster.NodeID, CheckEndpoints: n.checkEndpoints,
		MessageStatus: func(ctx context.Context, acct nodestore.Account, hook string, payload map[string]any) error {
			t, err := fragment.Parse(hook)
			if err != nil {
				return err
			}
			return n.status.NotifyMessage(ctx, acct, nodestore.HookSpec{URL: hook, Method: "POST"}, t, payload)
		},
		SecretRotated: func(ctx context.Context, old, rotated nodestore.Account, grace time.Duration) error {
			return n.status.RotateAccount(ctx, old, rotated, grace, outbox.Actor{ID: "admin", Reason: "webhook secret rotated"})
		}}); err != nil {
		n.closeStores()
		return nil, err
	}
	// The web console calls the same API in-process (docs/architecture.md).
	// Its in-process requests are not logged again: the console request itself is.
	con, err := console.New(console.Options{API: nodeapi.Handler(mux, zerolog.Nop()), Sessions: store, Portal: store,
		SessionIdle: consoleSessionIdle, SessionLifetime: consoleSessionLifetime, Clock: clock, Logger: opts.Logger})
	if err != nil {
		n.closeStores()
		return nil, err
	}
	mux.Handle(console.Prefix, con)
	// A browser pointed at the node lands on the console, not on a 404.
	mux.Handle("GET /{$}", http.RedirectHandler(console.Prefix, http.StatusFound))
	mux.Handle("GET /metrics", promhttp.HandlerFor(n.metrics.Registry, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { writeHealth(w, true, "ok") })
	// /readyz answers from what the periodic probe and the node's writes found: an
	// anonymous caller makes the node write nothing, and learns no path nor driver
	// error (the log has them).
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		if !n.ready.Load() {
			writeHealth(w, false, "draining")
			return
		}
		if err := n.db.ready(); err != nil {
			writeHealth(w, false, PublicNotWritable)
			return
		}
		writeHealth(w, true, "ready")
	})
	handler := n.withClient(nodeapi.Handler(mux, opts.Logger))
	if n.tracing != nil {
		handler = traceAPI(handler, mux, n.tracing.Tracer("github.com/switchboard-voice/switchboard/featureserver"))
	}
	n.server = &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		// A client that reads its answer too slowly (or never) is cut: no request
		// the API serves takes long (live control forwarded to a peer: 10 s).
		WriteTimeout:   writeTimeout,
		IdleTimeout:    2 * time.Minute,
		MaxHeaderBytes: 64 << 10,
	}
	return n, nil
}

// openOutbox opens the outbox on the node's database, with the status hooks
// wired in (package statushooks). Who set a URL decides its rules: the status hook
// endpoints the node manages carry application URLs, dialed with the call-control
// egress rules (private addresses allowed, EnvEgressAllow applied); every other
// endpoint (an account's own, its notice URL) is dialed public-only
// (EnvOutboxEgressAllow applied), every address checked at every dial.
func (n *Node) openOutbox(ctx context.Context, observe func(outbox.Delivery, outbox.Attempt)) error {
	st, closeStore, watch, err := n.db.outboxStore(ctx, n.log)
	if err != nil {
		return fmt.Errorf("outbox store: %w", err)
	}
	// Closed by closeStores, in its order (after the node's store on SQLite).
	n.closeOutboxStore = closeStore
	hookRules, rules := callControlRules(n.cfg), webhookRules(n.cfg)
	// A status receiver takes up to its endpoint's in-flight cap (10 under the standard
	// profile) at once: keep that many connections to it rather than dial each time.
	opts := transport.ClientOptions{ConnectTimeout: n.cfg.CallControl.HTTPTimeout, MaxIdleConnsPerHost: 16, Resolver: n.resolver}
	if n.cfg.Outbox.EgressProxy != "" {
		proxy, err := transport.ParseProxyURL(n.cfg.Outbox.EgressProxy) // validated with the config
		if err != nil {
			return fmt.Errorf("%s: %w", EnvEgressProxy, err)
		}
		// Both clients' connections go through the proxy: the account's endpoints
		// and the status hooks alike (docs/outbox.md §6).
		opts.Connect = transport.ProxyConnect(proxy)
	}
	hookClient := transport.NewHTTPClient(hookRules, opts)
	client := transport.NewHTTPClient(rules, opts)
	status, err := statushooks.Open(ctx, outbox.Config{
		Store: st, Egress: &rules, HTTPClient: client, Logger: n.log, Secrets: n.sealer(),
		// The account reads its delivery log: what a status hook reached under the
		// call-control rules answered stays in it only from an address its own
		// endpoints could reach (docs/outbox.md §7).
		ReadBack:       func(_ outbox.Endpoint, p transport.Peer) bool { return rules.Admits(p.Host, p.Addr) },
		Notify:         n.notices.Notify,
		TracerProvider: n.tracerProvider(),
		UserAgent:      n.cfg.CallControl.UserAgent,
		// Deliveries still in flight at shutdown are released (retried at the next
		// start) after a short wait, so that a node without calls stops promptly.
		ShutdownTimeout: 2 * time.Second,
		LeaseDuration:   n.cfg.Outbox.LeaseDuration,
		Retention:       n.cfg.Outbox.Retention,
		ReapInterval:    reapInterval(n.cfg.Outbox.LeaseDuration),
		Observe: func(d outbox.Delivery, a outbox.Attempt) {
			n.metrics.ObserveDelivery(d, a)
			if observe != nil {
				observe(d, a)
			}
		},
	}, statushooks.Options{
		Store: n.store, Logger: n.log, HookClient: hookClient,
		OnAlert: func(a nodestore.Alert) { n.metrics.AlertRaised(a.Type) },
	})
	if err != nil {
		return fmt.Errorf("outbox: %w", err)
	}
	n.status, n.outbox = status, status.Outbox()
	if watch.stats != nil {
		n.metrics.WatchStore(watch.stats)
	}
	if watch.depth != nil {
		n.metrics.WatchQueue(watch.depth)
	}
	return nil
}

// withClient passes each request on with its client's address in its context
// (authlimit.WithClient), which the limits on failed authentication count by: the
// connection's peer, or behind SWITCHBOARD_TRUSTED_PROXIES the client they name.
// The console's in-process requests to the API inherit it.
func (n *Node) withClient(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		addr := authlimit.ClientAddr(r, n.cfg.TrustedProxies)
		next.ServeHTTP(w, r.WithContext(authlimit.WithClient(r.Context(), addr)))
	})
}

// sealer is what seals the outbox's endpoint secrets: the node's keys, or none
// (in clear) without SWITCHBOARD_SECRETS_KEY.
func (n *Node) sealer() outbox.SecretSealer {
	if !n.db.secrets.Enabled() {
		return nil
	}
	return n.db.secrets
}

// callControlRules are the call-control egress rules plus the node's allow-list
// (docs/call-control.md §5): application URLs, which self-hosted apps put on
// private networks.
func callControlRules(cfg Config) transport.EgressRules {
	rules := transport.CallControlRules(false)
	rules.Name, rules.AllowSetting = "call-control rules", EnvEgressAllow
	rules.AllowPrefixes = cfg.EgressAllow.Prefixes
	rules.AllowHosts = cfg.EgressAllow.Hosts
	rules.DenyHosts = cfg.Outbox.EgressDeny
	return rules
}

// accountsNetwork is the call network of a node's calls, whose alerts and warnings
// an account reads: they quote what an application answered only when it came
// from an address the account's own webhooks may reach (readable, the outbox's
// rules), not from the operator's network that the call-control rules open to
// application URLs (docs/call-control.md §5).
type accountsNetwork struct {
	*CallNetwork
	readable transport.EgressRules
}

// notQuotedHint stands in a node's alerts for a quote of an answer from outside
// the outbox's rules.
var notQuotedHint = "not quoted: the application's address is outside the public-only rules; " + EnvOutboxEgressAllow + " can allow it"

func (n accountsNetwork) CallOptions(appURL string) callctl.Options {
	o := n.CallNetwork.CallOptions(appURL)
	o.QuoteAnswersFrom = func(p transport.Peer) bool { return n.readable.Admits(p.Host, p.Addr) }
	o.NotQuotedHint = notQuotedHint
	return o
}

// webhookRules are the rules of the URLs an account sets for the outbox to reach
// (webhook endpoints, notice URLs): public addresses only, plus the outbox's own
// allow-list (docs/outbox.md §6), checked at create, at update and at every dial.
func webhookRules(cfg Config) transport.EgressRules {
	rules := transport.PublicOnly()
	rules.Name, rules.AllowSetting = "public-only rules of webhook endpoints", EnvOutboxEgressAllow
	rules.AllowPrefixes = cfg.Outbox.EgressAllow.Prefixes
	rules.AllowHosts = cfg.Outbox.EgressAllow.Hosts
	rules.DenyHosts = cfg.Outbox.EgressDeny
	return rules
}

// writeHealth answers a health check: {"status": ...}.
func writeHealth(w http.ResponseWriter, ok bool, status string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if !ok {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	_ = json.NewEncoder(w).Encode(map[string]string{"status": status})
}

// Run serves the node on cfg.Listen and starts delivering status notifications; it
// calls onListening, when set, with the bound address once the node listens. When
// ctx ends it drains: it stops taking calls (/readyz and new calls answer 503), lets
// active calls finish up to cfg.DrainTimeout while the API keeps answering, ends the
// rest with reason node-shutdown, lets the outbox finish its deliveries in flight
// (briefly; the rest are retried at the next start), and returns nil. It returns an
// error when the address cannot be bound or the server fails. Either way the node's
// database is closed when Run returns: a Node runs once.
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
	stopLease, err := n.startLease(ln.Addr())
	if err != nil {
		ln.Close()
		_ = n.outbox.Close(context.Background())
		n.closeStores()
		return err
	}
	defer stopLease()
	probeCtx, stopProbing := context.WithCancel(context.Background())
	probing := make(chan struct{})
	go func() { defer close(probing); n.db.health.run(probeCtx) }()
	stopProbe := func() { stopProbing(); <-probing } // before the stores close
	n.ready.Store(true)
	n.log.Info().Str("listen", ln.Addr().String()).Str("console", "http://"+ln.Addr().String()+console.Prefix).
		Str("node", n.cfg.Cluster.NodeID).Str("database", dburl.Redact(n.cfg.DatabaseURL)).Msg("switchboard node listening")
	if onListening != nil {
		onListening(ln.Addr())
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- n.server.Serve(ln) }()
	retainCtx, stopRetaining := context.WithCancel(context.Background())
	retained := make(chan struct{})
	go func() { defer close(retained); n.retain(retainCtx) }()
	stopRetain := func() { stopRetaining(); <-retained } // before the stores close
	select {
	case err := <-serveErr:
		stopRetain()
		stopProbe()
		stopLease() // before the stores close: its give-up writes to them
		_ = n.outbox.Close(context.Background())
		n.closeStores()
		return err
	case <-ctx.Done():
	}
	n.ready.Store(false)
	drain := max(n.cfg.DrainTimeout, 0) // negative: no wait
	n.log.Info().Int("active_calls", n.calls.Active()).Dur("drain_timeout", drain).Msg("shutting down: draining calls")
	// The API keeps serving while calls drain, so their state stays readable.
	n.calls.Drain(drain)
	stopLease() // every call of the node has ended: other nodes need not wait for its lease
	// The calls' last status notifications are stored; deliveries in flight finish
	// (or are released for the next run).
	if err := n.outbox.Close(context.Background()); err != nil {
		n.log.Error().Err(err).Msg("closing the outbox")
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), n.shutdownGrace)
	defer cancel()
	err = n.server.Shutdown(shutdownCtx)
	if errors.Is(err, context.DeadlineExceeded) {
		// A request still running, or a client's connection that never sent one
		// (net/http takes a new connection for idle only once it is 5 s old): the
		// calls have drained and their records are saved, so closing them loses
		// nothing the node keeps, and is no failure of the stop.
		n.log.Warn().Dur("grace", n.shutdownGrace).Msg("API connections still open after the shutdown grace: closed")
		if cerr := n.server.Close(); cerr != nil {
			n.log.Warn().Err(cerr).Msg("closing the API's connections")
		}
		err = nil
	}
	if e := <-serveErr; !errors.Is(e, http.ErrServerClosed) && err == nil {
		err = e
	}
	stopRetain()
	stopProbe()
	if cerr := n.closeStores(); err == nil {
		err = cerr
	}
	n.log.Info().Msg("node stopped")
	return err
}

// closeStores closes what the node opened, whatever it got to, and closes the
// database last (on SQLite releasing the file's lock).
func (n *Node) closeStores() error {
	if n.notices != nil {
		ctx, cancel := context.WithTimeout(context.Background(), noticeTimeout)
		defer cancel()
		if err := n.notices.Close(ctx); err != nil {
			n.log.Error().Err(err).Msg("owners' notices still queued at shutdown were not sent")
		}
	}
	if n.status != nil {
		n.status.Wait()
	}
	var errs []error
	if n.closeOutboxStore != nil && n.db.shared() {
		errs = append(errs, n.closeOutboxStore()) // pgstore, on the pool the database closes
	}
	// On SQLite the node's store writes through the outbox store's writer: it
	// closes first.
	if n.store != nil {
		errs = append(errs, n.store.Close())
	}
	if n.closeOutboxStore != nil && !n.db.shared() {
		errs = append(errs, n.closeOutboxStore())
	}
	if n.tracing != nil {
		// The spans of the node's last moments are exported, for a while.
		ctx, cancel := context.WithTimeout(context.Background(), n.cfg.Tracing.Timeout)
		defer cancel()
		if err := n.tracing.Shutdown(ctx); err != nil {
			n.log.Warn().Err(err).Msg("exporting the last spans failed")
		}
	}
	// Last: the pool, or the SQLite file's lock.
	return errors.Join(append(errs, n.db.close())...)
}

// tracerProvider is the node's, or nil when it traces nothing: a nil interface,
// which the packages it goes to read as "no tracing".
func (n *Node) tracerProvider() trace.TracerProvider {
	if n.tracing == nil {
		return nil
	}
	return n.tracing
}

// checkEndpoints reports the first of ids that is not an endpoint of account (a
// magic link is confined to endpoints that exist), with ErrNotFound; -1 with any
// other error.
func (n *Node) checkEndpoints(ctx context.Context, account string, ids []string) (int, error) {
	for i, id := range ids {
		ep, err := n.outbox.GetEndpoint(ctx, account, id)
		if errors.Is(err, outbox.ErrNotFound) || err == nil && ep.RemovedAt != nil {
			return i, outbox.ErrNotFound
		}
		if err != nil {
			return -1, err
		}
	}
	return -1, nil
}
