package calls

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/switchboard-voice/switchboard/callctl"
	"github.com/switchboard-voice/switchboard/callctl/scenario"
	"github.com/switchboard-voice/switchboard/featureserver/internal/metrics"
	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore"
	"github.com/switchboard-voice/switchboard/fragment"
	"github.com/switchboard-voice/switchboard/retry"
)

// Errors of the call manager.
var (
	// ErrDraining: the node is shutting down and takes no new calls.
	ErrDraining = errors.New("node is draining: no new calls")
	// ErrTooManyCalls: MaxCalls calls are already active.
	ErrTooManyCalls = errors.New("too many active calls")
	// ErrUnwritable: the store cannot keep the call's record (Options.Writable
	// said why, in the error wrapping this one), so the call is refused rather than
	// run with a record that would be lost.
	ErrUnwritable = errors.New("the node's database cannot be written: no new calls")
	// ErrCallEnded: live control of a call that already ended.
	ErrCallEnded = errors.New("call has ended")
	// ErrControlBacklog: the call has not yet applied earlier commands.
	ErrControlBacklog = errors.New("too many pending commands for the call")
)

// Network builds what every call of the node shares: the hook clients and WebSocket
// options of a call to an application URL (featureserver.CallNetwork).
type Network interface {
	// CallOptions returns the Options of a call to appURL; the manager adds what is
	// the call's own.
	CallOptions(appURL string) callctl.Options
	// CloseIdleConnections closes pooled connections once the calls are over.
	CloseIdleConnections()
}

// StatusHooks takes over the status notifications of the calls whose application
// has a status hook (the node's outbox, featureserver/internal/statushooks) and names their
// deliveries for the calls' records.
type StatusHooks interface {
	// ForCall returns the notifier of one call of account whose status hook is hook.
	ForCall(account nodestore.Account, hook nodestore.HookSpec) callctl.StatusNotifier
	// Deliveries lists the deliveries of a call's notifications so far.
	Deliveries(callSid string) []nodestore.StatusDelivery
	// Forget drops them, once the call's record holds them.
	Forget(callSid string)
	// Notify hands over one status notification of a call no longer running (the
	// final one of a call a crash cut short), to the status hook target (hook as
	// the application configured it, for its method and credentials): the
	// notification is stored for delivery when it returns nil. The final
	// notification of a call is kept once, whoever hands it over.
	Notify(ctx context.Context, account nodestore.Account, hook nodestore.HookSpec, target fragment.Target, payload map[string]any) error
}

// Options configure a Manager. Zero values take the defaults documented per field.
type Options struct {
	// Store keeps the call records and the alerts calls raise. Required.
	Store nodestore.Store
	// Network builds each call's hook clients and WebSocket options. Required.
	Network Network
	// MaxCalls caps concurrent calls; more are refused with ErrTooManyCalls.
	// Required: at least 1.
	MaxCalls int
	// IdleLimit ends a WebSocket call whose verbs ran out and that has heard nothing
	// for this long (callctl.Options.IdleLimit). Required: positive.
	IdleLimit time.Duration
	// Limits bound each call (callctl.Options.MaxDuration, MaxRequests,
	// MaxEvents). Default: callctl's for each zero field.
	Limits Limits
	// Status, when set, takes over the status notifications of each call with a
	// status hook (the node's outbox), and the call's record names their
	// deliveries. Default none: the call sends them itself.
	Status StatusHooks
	// Metrics counts calls, their hook attempts and alerts. Default: metrics of a
	// registry of their own.
	Metrics *metrics.Metrics
	// Node is this node's id, recorded in each call's record: in a database that
	// several nodes share, it says which node runs the call (Locate, RecoverLost).
	// Default none.
	Node string
	// Clock stamps the records: creation, end, alerts. Default the wall clock.
	Clock retry.Clock
	// Writable, when set, says why the store cannot keep records now (nil when it
	// can). Start asks it before a call and again when saving the call's record
	// fails, and refuses the call with ErrUnwritable: a call whose record would
	// vanish (a deleted SQLite file still takes writes) is not started. It must be
	// cheap: it runs on every call. Default none.
	Writable func() error
	// WriteTimeout bounds each write of a call's record or alert (and Start's with
	// the request's context): a stalled database fails the write (logged, retried
	// for a call's final record, or the call refused) instead of holding the API
	// request or the call. Default 10s.
	WriteTimeout time.Duration
	// Logger receives a line per call's end and every failure to record one; lines
	// about a call carry its call_sid. Default: the zero Logger, which discards them.
	Logger zerolog.Logger
}

// WithDefaults returns o with every zero value replaced by its default.
func (o Options) WithDefaults() Options {
	if o.Metrics == nil {
		o.Metrics = metrics.New()
	}
	if o.Clock == nil {
		o.Clock = retry.SystemClock{}
	}
	if o.WriteTimeout == 0 {
		o.WriteTimeout = 10 * time.Second
	}
	return o
}

// validate reports every bad value at once.
func (o Options) validate() error {
	checks := []struct {
		ok          bool
		field, want string
	}{
		{o.Store != nil, "Store", "required"},
		{o.Network != nil, "Network", "required"},
		{o.MaxCalls >= 1, "MaxCalls", "must be at least 1"},
		{o.IdleLimit > 0, "IdleLimit", "must be positive"},
		{o.WriteTimeout > 0, "WriteTimeout", "must be positive"},
	}
	var errs []error
	for _, c := range checks {
		if !c.ok {
			errs = append(errs, errors.New("calls: Options."+c.field+" "+c.want))
		}
	}
	return errors.Join(errs...)
}

// Limits are the limits of one call: its length on the wall clock, its requests to
// the application and its timeline's events.
type Limits struct {
	Duration time.Duration
	Requests int
	Events   int
}

// Hook is a call's application: its hook as the API and the store have it, and its
// URL parsed, once, when the call was asked for.
type Hook struct {
	Spec nodestore.HookSpec
	URL  fragment.Target
}

// ParseHook parses spec's URL (fragment.Parse): a URL that does not parse is its
// error.
func ParseHook(spec nodestore.HookSpec) (Hook, error) {
	t, err := fragment.Parse(spec.URL)
	if err != nil {
		return Hook{}, err
	}
	return Hook{Spec: spec, URL: t}, nil
}

// Request is a call to start.
type Request struct {
	Account        nodestore.Account
	ApplicationSid string
	CallHook       Hook
	CallStatusHook *nodestore.HookSpec
	From, To       string
	Tag            map[string]any
	// Application is what the call hook tells the application about itself
	// (defaults, env_vars).
	Application callctl.Application
	// Compat are warnings about the request itself (fields jambonz's API ignores),
	// recorded at the start of the call's timeline.
	Compat []callctl.Compat
	// RingTimeout is how long the call rings before it is canceled (the request's
	// timeout); 0 is callctl's default, 60 s.
	RingTimeout time.Duration
	Script      callctl.Script
	Expect      scenario.Expectations
}

// liveCall is a call in progress.
type liveCall struct {
	appURL  string // the call hook, for alerts
	control chan callctl.Control
	mu      sync.Mutex
	view    nodestore.Call
	cancel  context.CancelCauseFunc
	done    chan struct{} // closed once the call's final record is saved
}

func (lc *liveCall) snapshot(withTimeline bool) nodestore.Call {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	v := lc.view
	if withTimeline {
		v.Timeline = append([]json.RawMessage(nil), lc.view.Timeline...)
	} else {
		v.Timeline = nil
	}
	return v
}

// Manager starts, tracks and drains the node's calls. It is safe for concurrent use.
type Manager struct {
	opts    Options
	store   nodestore.Store
	log     zerolog.Logger
	metrics *metrics.Metrics

	warned sync.Map // URLs whose fragment warnings were logged (once per URL)

	mu       sync.Mutex
	calls    map[string]*liveCall
	draining bool
	drained  chan struct{} // closed when draining starts
	giveUp   chan struct{} // closed when a drain stops retrying failed saves
	wg       sync.WaitGroup
}

// New returns a manager of no calls, or the error naming every bad option.
func New(opts Options) (*Manager, error) {
	opts = opts.WithDefaults()
	if err := opts.validate(); err != nil {
		return nil, err
	}
	return &Manager{opts: opts, store: opts.Store, log: opts.Logger, metrics: opts.Metrics,
		calls: map[string]*liveCall{}, drained: make(chan struct{}), giveUp: make(chan struct{})}, nil
}

// warnFragment logs, once per URL, why a URL's retry fragment was not taken as
// written (an invalid rc, an unknown rp class): docs/call-control.md §1.
func (m *Manager) warnFragment(t fragment.Target) {
	if len(t.Policy.Warnings) == 0 {
		return
	}
	if _, seen := m.warned.LoadOrStore(t.Raw, true); seen {
		return
	}
	for _, w := range t.Policy.Warnings {
		m.log.Warn().Str("url", t.Raw).Msg(w)
	}
}

// forWrite is ctx bounded by Options.WriteTimeout, for one write.
func (m *Manager) forWrite(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, m.opts.WriteTimeout)
}

// writable is ErrUnwritable wrapped with Options.Writable's reason, or nil.
func (m *Manager) writable() error {
	if m.opts.Writable == nil {
		return nil
	}
	if err := m.opts.Writable(); err != nil {
		return fmt.Errorf("%w: %w", ErrUnwritable, err)
	}
	return nil
}

// Start starts a call and returns its sid once the call is on record; the call runs
// in the background until it ends, is hung up or the manager drains, whatever
// becomes of ctx (the request's), which bounds the record's write only (and
// Options.WriteTimeout with it). It fails with ErrDraining once Drain began, with
// ErrTooManyCalls at MaxCalls active calls, and with the store's error when the call
// cannot be put on record (then nothing runs).
func (m *Manager) Start(ctx context.Context, req Request) (string, error) {
	m.warnFragment(req.CallHook.URL)
	if req.CallStatusHook != nil {
		// The status hook's own fragment: parsed here alone, for its warnings.
		if t, err := fragment.Parse(req.CallStatusHook.URL); err == nil {
			m.warnFragment(t)
		}
	}
	if err := m.writable(); err != nil {
		return "", err
	}
	sid := nodestore.NewSid()
	opts := m.callOptions(req, sid)
	m.mu.Lock()
	switch {
	case m.draining:
		m.mu.Unlock()
		return "", ErrDraining
	case len(m.calls) >= m.opts.MaxCalls:
		m.mu.Unlock()
		return "", ErrTooManyCalls
	}
	callCtx, cancel := context.WithCancelCause(context.Background())
	lc := &liveCall{cancel: cancel, appURL: req.CallHook.Spec.URL, control: make(chan callctl.Control, controlBacklog), done: make(chan struct{}), view: nodestore.Call{
		CallSid: sid, AccountSid: req.Account.Sid, ApplicationSid: req.ApplicationSid, Node: m.opts.Node,
		From: opts.Call.From, To: opts.Call.To, Direction: opts.Call.Direction,
		CallStatus: string(callctl.StatusTrying), Active: true, CreatedAt: m.opts.Clock.Now().UTC().Truncate(time.Millisecond), // the API's one precision
		Recovery: m.recovery(req, opts),
	}}
	m.calls[sid] = lc
	m.wg.Add(1)
	m.mu.Unlock()

	// The call is on record from its start, so a crash of the node cannot make it
	// vanish (RecoverInterrupted ends such records at the next start).
	saveCtx, saved := m.forWrite(ctx)
	err := m.store.SaveCall(saveCtx, lc.view)
	saved()
	if err != nil {
		m.mu.Lock()
		delete(m.calls, sid)
		m.mu.Unlock()
		m.wg.Done()
		cancel(err)
		if werr := m.writable(); werr != nil {
			return "", werr
		}
		return "", err
	}
	opts.OnEvent = func(e callctl.Event) { m.observe(lc, req.Account, e) }
	opts.Control = lc.control
	m.metrics.CallStarted()
	go m.run(callCtx, lc, req, opts)
	return sid, nil
}

// recovery is what the call's record keeps for its final status notification should
// the node crash: for an HTTP application with a status hook whose notifications
// go through Options.Status (a WebSocket application's go over its socket, which a
// crash closes).
func (m *Manager) recovery(req Request, opts callctl.Options) *nodestore.CallRecovery {
	if req.CallStatusHook == nil || m.opts.Status == nil || req.CallHook.URL.Policy.Transport != fragment.HTTP {
		return nil
	}
	if t, err := fragment.Parse(req.CallStatusHook.URL); err != nil || t.Policy.Transport != fragment.HTTP {
		return nil // a ws(s) status hook of an HTTP app gets nothing (docs/compatibility.md §7)
	}
	return &nodestore.CallRecovery{AppURL: req.CallHook.Spec.URL, StatusHook: *req.CallStatusHook, Fields: opts.Call.Fields()}
}

func (m *Manager) callOptions(req Request, sid string) callctl.Options {
	hook := req.CallHook.Spec
	opts := m.opts.Network.CallOptions(hook.URL)
	opts.App = req.CallHook.URL // parsed once, when the call was asked for
	opts.Method, opts.Username, opts.Password = hook.Method, hook.Username, hook.Password
	// A rotated secret signs beside the new one while its grace period lasts.
	if secrets := req.Account.SigningSecrets(m.opts.Clock.Now()); len(secrets) > 1 {
		opts.Secret, opts.PreviousSecret = secrets[0], secrets[1]
	} else {
		opts.Secret = req.Account.WebhookSecret
	}
	// A call the API creates is an outbound call of the node, as jambonz's REST
	// calls are; its application is the one named, or none for an inline hook.
	opts.Call = callctl.CallInfo{
		CallSid: sid, Direction: "outbound", From: req.From, To: req.To, AccountSid: req.Account.Sid,
		ApplicationSid: req.ApplicationSid, CustomerData: req.Tag,
	}
	// The call info is settled here rather than in callctl, so that the record
	// can keep what a crash would need for the call's final notification.
	opts.Call = opts.Call.WithDefaults()
	opts.Script = req.Script
	opts.Application, opts.RingTimeout, opts.Compat = req.Application, req.RingTimeout, req.Compat
	opts.IdleLimit = m.opts.IdleLimit
	// A node's calls are real calls: retry delays, reconnect backoff, media and
	// the call's limits pass on the wall clock (docs/call-control.md §4b), so that
	// the retry schedule protects the application as it is meant to.
	opts.RealTime = true
	opts.MaxDuration, opts.MaxRequests, opts.MaxEvents = m.opts.Limits.Duration, m.opts.Limits.Requests, m.opts.Limits.Events
	if req.CallStatusHook != nil {
		h := req.CallStatusHook
		opts.StatusHookURL, opts.StatusHookMethod = h.URL, h.Method
		opts.StatusHookUsername, opts.StatusHookPassword = h.Username, h.Password
		if t, err := fragment.Parse(h.URL); m.opts.Status != nil && err == nil && t.Policy.Transport == fragment.HTTP {
			opts.StatusNotifier = m.opts.Status.ForCall(req.Account, *h)
		}
	}
	return opts
}

func (m *Manager) run(ctx context.Context, lc *liveCall, req Request, opts callctl.Options) {
	defer m.wg.Done()
	log := m.log.With().Str("call_sid", lc.view.CallSid).Logger()
	res, err := callctl.Run(ctx, opts)
	now := m.opts.Clock.Now().UTC().Truncate(time.Millisecond)
	lc.mu.Lock()
	lc.view.Active = false
	lc.view.EndedAt = &now
	lc.view.Recovery = nil // ended: nothing to recover
	if err != nil {
		// Options the runtime refused (a bad URL slipped past the API): record it as
		// a failed call rather than losing it.
		lc.view.CallStatus, lc.view.Reason = string(callctl.StatusFailed), err.Error()
	} else {
		lc.view.CallStatus, lc.view.Reason, lc.view.SipStatus = string(res.Status), res.Reason, res.SIPStatus
		// A call this node stopped has the cause as its reason (callctl.Run).
		lc.view.ExpectationsFailed = req.Expect.Check(res)
	}
	if m.opts.Status != nil {
		lc.view.StatusDeliveries = m.opts.Status.Deliveries(lc.view.CallSid)
	}
	view := lc.view
	lc.mu.Unlock()
	m.metrics.CallEnded(view.Reason)
	m.end(log, lc, view)
	log.Info().Str("status", view.CallStatus).Str("reason", view.Reason).Msg("call ended")
}

// end saves lc's final view and then lets the call go. The order matters to
// readers: a call that is no longer in m.calls has its final record in the store
// (List relies on it), unless saveFinal gave up at the end of a drain.
func (m *Manager) end(log zerolog.Logger, lc *liveCall, view nodestore.Call) {
	m.saveFinal(log, view)
	if m.opts.Status != nil {
		m.opts.Status.Forget(view.CallSid)
	}
	m.mu.Lock()
	delete(m.calls, view.CallSid)
	m.mu.Unlock()
	close(lc.done)
}

// The backoff of saveFinal's retries.
const (
	saveRetryFirst = 50 * time.Millisecond
	saveRetryMax   = 5 * time.Second
)

// saveFinal saves a call's final record, retrying until the store takes it: a record
// left active would end as node-restart at the next start although the call ended
// otherwise. Until then the call stays in the manager (Get shows it ended). The
// retries stop only when the manager gives up at the end of a drain (giveUp), the
// database still failing: that record is then the next start's to repair. On a
// database several nodes share, a node cut off for longer than its lease finds its
// call recorded as ended by another node (node-lost) when the database is back: the
// call's real end then replaces that record.
func (m *Manager) saveFinal(log zerolog.Logger, view nodestore.Call) {
	delay := saveRetryFirst
	for attempt := 1; ; attempt++ {
		ctx, cancel := m.forWrite(context.Background())
		err := m.store.SaveCall(ctx, view)
		cancel()
		if err == nil {
			if attempt > 1 {
				log.Info().Int("attempts", attempt).Msg("the call record was saved after failures")
			}
			return
		}
		log.Error().Err(err).Int("attempt", attempt).Dur("retry_in", delay).Msg("saving the call record failed; retrying")
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-m.giveUp:
			t.Stop()
			log.Error().Err(err).Msg("the call record could not be saved before the node stopped: the next start records the call as node-restart")
			return
		}
		delay = min(2*delay, saveRetryMax)
	}
}

// observe records a timeline event, counts it and stores alerts.
func (m *Manager) observe(lc *liveCall, account nodestore.Account, e callctl.Event) {
	line, err := json.Marshal(e)
	if err != nil { // cannot happen: an Event always marshals
		m.log.Error().Err(err).Str("call_sid", e.CallSid).Msg("encoding a timeline event failed")
		return
	}
	lc.mu.Lock()
	lc.view.Timeline = append(lc.view.Timeline, line)
	if e.Kind == callctl.KindCallStatus {
		lc.view.CallStatus = e.Status
	}
	lc.mu.Unlock()
	if e.Kind == callctl.KindCallStatus && e.Status == string(callctl.StatusInProgress) {
		// Answered: on record as such, with its timeline so far, so that a crash
		// now leaves a completed call (Interrupted). This runs on the call's
		// goroutine, before the record of its end.
		ctx, cancel := m.forWrite(context.Background())
		err := m.store.SaveCall(ctx, lc.snapshot(true))
		cancel()
		if err != nil {
			m.log.Error().Err(err).Str("call_sid", e.CallSid).Msg("recording the answered call failed")
		}
	}
	m.metrics.ObserveEvent(e)
	if e.Kind == callctl.KindAlert {
		url := e.URL // the request at fault
		if url == "" {
			url = lc.appURL
		}
		alert := nodestore.Alert{AccountSid: account.Sid, Type: string(e.AlertType), CallSid: e.CallSid,
			URL: url, Detail: e.Detail, Time: m.opts.Clock.Now().UTC()}
		ctx, cancel := m.forWrite(context.Background())
		err := m.store.AddAlert(ctx, alert)
		cancel()
		if err != nil {
			m.log.Error().Err(err).Str("call_sid", e.CallSid).Msg("storing an alert failed")
		}
	}
}
