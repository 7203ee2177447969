package featureserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/switchboard-voice/switchboard/callctl"
	"github.com/switchboard-voice/switchboard/callctl/scenario"
	"github.com/switchboard-voice/switchboard/fragment"
	"github.com/switchboard-voice/switchboard/transport"
)

// Errors of the call manager.
var (
	// ErrDraining: the node is shutting down and takes no new calls.
	ErrDraining = errors.New("node is draining: no new calls")
	// ErrTooManyCalls: MaxCalls calls are already active.
	ErrTooManyCalls = errors.New("too many active calls")
	// ErrCallEnded: live control of a call that already ended.
	ErrCallEnded = errors.New("call has ended")
	// ErrControlBacklog: the call has not yet applied earlier commands.
	ErrControlBacklog = errors.New("too many pending commands for the call")
)

// Reasons the node records for calls it ended itself.
const (
	// ReasonNodeShutdown: still active when the drain timeout passed.
	ReasonNodeShutdown = "node-shutdown"
	// ReasonNodeRestart: active when a previous run of the node stopped without
	// draining (a crash, SIGKILL); recorded at the next start.
	ReasonNodeRestart = "node-restart"
)

// The cancel causes of calls ended from outside; their text is the recorded reason.
var (
	errShutdown  = errors.New(ReasonNodeShutdown)
	errAPIHangup = errors.New(callctl.ReasonAPIHangup)
)

// CallRequest is a call to start.
type CallRequest struct {
	Account        Account
	ApplicationSid string
	CallHook       HookSpec
	CallStatusHook *HookSpec
	From, To       string
	Tag            map[string]any
	Script         callctl.Script
	Expect         scenario.Expectations
}

// CallView is a call as the API shows it.
type CallView struct {
	CallSid        string     `json:"call_sid"`
	AccountSid     string     `json:"account_sid"`
	ApplicationSid string     `json:"application_sid,omitempty"`
	From           string     `json:"from"`
	To             string     `json:"to"`
	Direction      string     `json:"direction"`
	CallStatus     string     `json:"call_status"`
	Active         bool       `json:"active"`
	Reason         string     `json:"reason,omitempty"`
	SipStatus      int        `json:"sip_status,omitempty"`
	CreatedAt      time.Time  `json:"created_at"`
	EndedAt        *time.Time `json:"ended_at,omitempty"`
	// ExpectationsFailed lists the scenario's expectations the call did not meet.
	ExpectationsFailed []string `json:"expectations_failed,omitempty"`
	// Timeline holds the call's events in the `simulate --json` format.
	Timeline []json.RawMessage `json:"timeline,omitempty"`
	// StatusDeliveries are the outbox deliveries of the call's status notifications
	// (docs/outbox.md §7), read in the outbox API.
	StatusDeliveries []StatusDelivery `json:"status_deliveries,omitempty"`
}

// liveCall is a call in progress.
type liveCall struct {
	appURL  string // the call hook, for alerts
	control chan callctl.Control
	mu      sync.Mutex
	view    CallView
	cancel  context.CancelCauseFunc
	done    chan struct{} // closed once the call's final record is saved
}

func (lc *liveCall) snapshot(withTimeline bool) CallView {
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

// CallManager starts, tracks and drains the node's calls.
type CallManager struct {
	cfg     Config
	store   *Store
	log     zerolog.Logger
	metrics *Metrics
	net     *CallNetwork
	status  func(Account, HookSpec) callctl.StatusNotifier // nil: status hooks are sent by the call
	// statusDeliveries, when set, lists a call's status deliveries so far;
	// forgetStatus drops them once the call's record holds them.
	statusDeliveries func(callSid string) []StatusDelivery
	forgetStatus     func(callSid string)

	warned sync.Map // URLs whose fragment warnings were logged (once per URL)

	mu       sync.Mutex
	calls    map[string]*liveCall
	draining bool
	wg       sync.WaitGroup
}

// NewCallManager returns a manager using the node's egress rules for hooks.
// status, when set, gives each call the notifier its HTTP status notifications go
// through (the node's outbox).
func NewCallManager(cfg Config, store *Store, metrics *Metrics, status func(Account, HookSpec) callctl.StatusNotifier, log zerolog.Logger) *CallManager {
	return &CallManager{
		cfg: cfg, store: store, log: log, metrics: metrics, status: status,
		net:   NewCallNetwork(cfg.CallControl, callControlRules(cfg), log),
		calls: map[string]*liveCall{},
	}
}

// callControlRules are the call-control egress rules plus the node's allow-list.
func callControlRules(cfg Config) transport.EgressRules {
	rules := transport.CallControlRules(false)
	rules.AllowPrefixes = cfg.EgressAllow.Prefixes
	rules.AllowHosts = cfg.EgressAllow.Hosts
	rules.DenyHosts = cfg.Outbox.EgressDeny
	return rules
}

// warnFragment logs, once per URL, why a URL's retry fragment was not taken as
// written (an invalid rc, an unknown rp class): docs/call-control.md §1.
func (m *CallManager) warnFragment(raw string) {
	t, err := fragment.Parse(raw)
	if err != nil || len(t.Policy.Warnings) == 0 {
		return
	}
	if _, seen := m.warned.LoadOrStore(raw, true); seen {
		return
	}
	for _, w := range t.Policy.Warnings {
		m.log.Warn().Str("url", raw).Msg(w)
	}
}

// Start starts a call and returns its sid at once; the call runs in the background.
func (m *CallManager) Start(req CallRequest) (string, error) {
	m.warnFragment(req.CallHook.URL)
	if req.CallStatusHook != nil {
		m.warnFragment(req.CallStatusHook.URL)
	}
	sid := newSid()
	opts := m.callOptions(req, sid)
	m.mu.Lock()
	switch {
	case m.draining:
		m.mu.Unlock()
		return "", ErrDraining
	case len(m.calls) >= m.cfg.MaxCalls:
		m.mu.Unlock()
		return "", ErrTooManyCalls
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	lc := &liveCall{cancel: cancel, appURL: req.CallHook.URL, control: make(chan callctl.Control, controlBacklog), done: make(chan struct{}), view: CallView{
		CallSid: sid, AccountSid: req.Account.Sid, ApplicationSid: req.ApplicationSid,
		From: opts.Call.From, To: opts.Call.To, Direction: "inbound",
		CallStatus: string(callctl.StatusTrying), Active: true, CreatedAt: time.Now().UTC(),
	}}
	m.calls[sid] = lc
	m.wg.Add(1)
	m.mu.Unlock()

	// The call is on record from its start, so a crash of the node cannot make it
	// vanish (InterruptActiveCalls ends such records at the next start).
	if err := m.store.SaveCall(context.Background(), req.Account.Sid, req.ApplicationSid, sid, lc.view.CreatedAt, true, lc.view); err != nil {
		m.mu.Lock()
		delete(m.calls, sid)
		m.mu.Unlock()
		m.wg.Done()
		cancel(err)
		return "", err
	}
	opts.OnEvent = func(e callctl.Event) { m.observe(lc, req.Account, e) }
	opts.Control = lc.control
	m.metrics.callsActive.Inc()
	go m.run(ctx, lc, req, opts)
	return sid, nil
}

func (m *CallManager) callOptions(req CallRequest, sid string) callctl.Options {
	opts := m.net.CallOptions(req.CallHook.URL)
	opts.Method, opts.Username, opts.Password = req.CallHook.Method, req.CallHook.Username, req.CallHook.Password
	opts.Secret = req.Account.WebhookSecret
	opts.Call = callctl.CallInfo{
		CallSid: sid, From: req.From, To: req.To, AccountSid: req.Account.Sid,
		ApplicationSid: req.ApplicationSid, CustomerData: req.Tag,
	}
	opts.Script = req.Script
	opts.IdleLimit = m.cfg.CallIdleTimeout
	if req.CallStatusHook != nil {
		h := req.CallStatusHook
		opts.StatusHookURL, opts.StatusHookMethod = h.URL, h.Method
		opts.StatusHookUsername, opts.StatusHookPassword = h.Username, h.Password
		if m.status != nil {
			opts.StatusNotifier = m.status(req.Account, *h)
		}
	}
	return opts
}

func (m *CallManager) run(ctx context.Context, lc *liveCall, req CallRequest, opts callctl.Options) {
	defer m.wg.Done()
	log := m.log.With().Str("call_sid", lc.view.CallSid).Logger()
	res, err := callctl.Run(ctx, opts)
	now := time.Now().UTC()
	lc.mu.Lock()
	lc.view.Active = false
	lc.view.EndedAt = &now
	if err != nil {
		// Options the runtime refused (a bad URL slipped past the API): record it as
		// a failed call rather than losing it.
		lc.view.CallStatus, lc.view.Reason = string(callctl.StatusFailed), err.Error()
	} else {
		lc.view.CallStatus, lc.view.Reason, lc.view.SipStatus = string(res.Status), res.Reason, res.SIPStatus
		// A call this node stopped has the cause as its reason (callctl.Run).
		lc.view.ExpectationsFailed = req.Expect.Check(res)
	}
	if m.statusDeliveries != nil {
		lc.view.StatusDeliveries = m.statusDeliveries(lc.view.CallSid)
	}
	view := lc.view
	lc.mu.Unlock()
	m.metrics.callsActive.Dec()
	m.metrics.callsTotal.WithLabelValues(view.Reason).Inc()
	saveCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := m.store.SaveCall(saveCtx, view.AccountSid, view.ApplicationSid, view.CallSid, view.CreatedAt, false, view); err != nil {
		log.Error().Err(err).Msg("saving the call record failed")
	}
	if m.forgetStatus != nil {
		m.forgetStatus(view.CallSid)
	}
	m.mu.Lock()
	delete(m.calls, view.CallSid)
	m.mu.Unlock()
	close(lc.done)
	log.Info().Str("status", view.CallStatus).Str("reason", view.Reason).Msg("call ended")
}

// ended returns a channel closed once the call's final record is saved: at once for
// a call that is not active on this node.
func (m *CallManager) ended(callSid string) <-chan struct{} {
	m.mu.Lock()
	lc, ok := m.calls[callSid]
	m.mu.Unlock()
	if ok {
		return lc.done
	}
	done := make(chan struct{})
	close(done)
	return done
}

// observe records a timeline event, counts it and stores alerts.
func (m *CallManager) observe(lc *liveCall, account Account, e callctl.Event) {
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
		// now leaves a completed call (InterruptActiveCalls). This runs on the call's
		// goroutine, before the record of its end.
		v := lc.snapshot(true)
		if err := m.store.SaveCall(context.Background(), v.AccountSid, v.ApplicationSid, v.CallSid, v.CreatedAt, true, v); err != nil {
			m.log.Error().Err(err).Str("call_sid", e.CallSid).Msg("recording the answered call failed")
		}
	}
	m.metrics.observe(e)
	if e.Kind == callctl.KindAlert {
		url := e.URL // the request at fault
		if url == "" {
			url = lc.appURL
		}
		alert := Alert{AccountSid: account.Sid, Type: string(e.AlertType), CallSid: e.CallSid,
			URL: url, Detail: e.Detail, Time: time.Now().UTC()}
		if err := m.store.AddAlert(context.Background(), alert); err != nil {
			m.log.Error().Err(err).Str("call_sid", e.CallSid).Msg("storing an alert failed")
		}
	}
}

// Get returns a call of the account, active or finished.
func (m *CallManager) Get(ctx context.Context, accountSid, callSid string) (CallView, error) {
	m.mu.Lock()
	lc, ok := m.calls[callSid]
	m.mu.Unlock()
	if ok {
		v := lc.snapshot(true)
		if v.AccountSid != accountSid {
			return CallView{}, ErrNotFound
		}
		if m.statusDeliveries != nil && v.Active {
			v.StatusDeliveries = m.statusDeliveries(callSid)
		}
		return v, nil
	}
	raw, err := m.store.CallRecord(ctx, accountSid, callSid)
	if err != nil {
		return CallView{}, err
	}
	return decodeCallView(raw)
}

// controlBacklog bounds live-call commands waiting for a call to apply them.
const controlBacklog = 8

// Hangup ends an active call of the account at once, even while it waits for a hook
// or an ack: the call is canceled with the cause api-hangup, its recorded reason.
func (m *CallManager) Hangup(accountSid, callSid string) error {
	lc, err := m.active(accountSid, callSid)
	if err != nil {
		return err
	}
	lc.cancel(errAPIHangup)
	return nil
}

// Redirect points an active call at a new application URL, http(s) or ws(s): its
// verbs replace the call's remaining verbs (callctl.Control.Redirect says how).
func (m *CallManager) Redirect(accountSid, callSid string, hook HookSpec) error {
	return m.send(accountSid, callSid, callctl.Control{Redirect: hook.URL})
}

// Mute mutes or unmutes an active call.
func (m *CallManager) Mute(accountSid, callSid string, mute bool) error {
	return m.send(accountSid, callSid, callctl.Control{Mute: &mute})
}

// active returns an active call of the account.
func (m *CallManager) active(accountSid, callSid string) (*liveCall, error) {
	m.mu.Lock()
	lc, ok := m.calls[callSid]
	m.mu.Unlock()
	if !ok || lc.snapshot(false).AccountSid != accountSid {
		return nil, ErrNotFound
	}
	if !lc.snapshot(false).Active {
		return nil, ErrCallEnded
	}
	return lc, nil
}

// send hands a live-call command to an active call of the account.
func (m *CallManager) send(accountSid, callSid string, ctl callctl.Control) error {
	lc, err := m.active(accountSid, callSid)
	if err != nil {
		return err
	}
	select {
	case lc.control <- ctl:
		return nil
	default:
		return ErrControlBacklog
	}
}

// Active returns the number of active calls.
func (m *CallManager) Active() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.calls)
}

// Drain stops taking calls, waits for active calls to end up to timeout, then ends
// the rest with ReasonNodeShutdown and waits for them to be recorded.
func (m *CallManager) Drain(timeout time.Duration) {
	m.mu.Lock()
	m.draining = true
	m.mu.Unlock()
	done := make(chan struct{})
	go func() { m.wg.Wait(); close(done) }()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-done:
		return
	case <-t.C:
	}
	m.mu.Lock()
	for _, lc := range m.calls {
		lc.cancel(errShutdown)
	}
	n := len(m.calls)
	m.mu.Unlock()
	m.log.Warn().Int("calls", n).Dur("drain_timeout", timeout).Msg("drain timeout passed: ending active calls")
	<-done
	m.net.CloseIdleConnections()
}

func decodeCallView(raw []byte) (CallView, error) {
	var v CallView
	if err := json.Unmarshal(raw, &v); err != nil {
		return CallView{}, fmt.Errorf("stored call record: %w", err)
	}
	return v, nil
}

// List returns the account's calls, active ones first, then finished ones, newest
// first, without timelines, at most limit.
func (m *CallManager) List(ctx context.Context, accountSid string, limit int) ([]CallView, error) {
	out := []CallView{}
	m.mu.Lock()
	live := make([]*liveCall, 0, len(m.calls))
	for _, lc := range m.calls {
		live = append(live, lc)
	}
	m.mu.Unlock()
	for _, lc := range live {
		if v := lc.snapshot(false); v.AccountSid == accountSid {
			out = append(out, v)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].CreatedAt.After(out[j].CreatedAt) })
	if len(out) >= limit {
		return out[:limit], nil
	}
	records, err := m.store.CallRecords(ctx, accountSid, limit-len(out))
	if err != nil {
		return nil, err
	}
	seen := make(map[string]bool, len(out))
	for _, v := range out {
		seen[v.CallSid] = true
	}
	for _, raw := range records {
		v, err := decodeCallView(raw)
		if err != nil {
			return nil, err
		}
		if seen[v.CallSid] { // ended between the two reads
			continue
		}
		v.Timeline = nil
		out = append(out, v)
	}
	return out, nil
}

// endInterrupted ends the stored record of a call that a previous run left active.
func endInterrupted(raw json.RawMessage) (any, error) {
	v, err := decodeCallView(raw)
	if err != nil {
		return nil, err
	}
	now := time.Now().UTC()
	v.Active, v.EndedAt, v.Reason = false, &now, ReasonNodeRestart
	if v.CallStatus != string(callctl.StatusInProgress) {
		v.CallStatus = string(callctl.StatusFailed)
	} else {
		v.CallStatus, v.SipStatus = string(callctl.StatusCompleted), 200 // it had been answered
	}
	return v, nil
}
