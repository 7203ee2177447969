package metrics

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/switchboard-voice/switchboard/callctl"
	"github.com/switchboard-voice/switchboard/outbox"
	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
	"github.com/switchboard-voice/switchboard/outbox/sqlitestore"
)

// Metrics are the node's Prometheus metrics. Their methods are safe for concurrent
// use.
type Metrics struct {
	// Registry holds them, with the Go runtime's and the process's.
	Registry       *prometheus.Registry
	callsActive    prometheus.Gauge
	callsTotal     *prometheus.CounterVec
	hookAttempts   *prometheus.CounterVec
	hookRetries    prometheus.Counter
	wsReconnects   prometheus.Counter
	alerts         *prometheus.CounterVec
	outboxOutcomes *prometheus.CounterVec
	hookDuration   *prometheus.HistogramVec
	outboxDuration *prometheus.HistogramVec
}

// New registers the node's metrics and the Go runtime's on a new registry.
func New() *Metrics {
	m := &Metrics{
		Registry: prometheus.NewRegistry(),
		callsActive: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "switchboard_calls_active", Help: "Calls in progress."}),
		callsTotal: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "switchboard_calls_total", Help: "Calls ended, by outcome (the call.end reason)."}, []string{"outcome"}),
		hookAttempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "switchboard_hook_attempts_total", Help: "Hook attempts (HTTP and WebSocket connects), by result class."}, []string{"class"}),
		hookRetries: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "switchboard_hook_retries_total", Help: "Hook retries scheduled."}),
		wsReconnects: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "switchboard_ws_reconnects_total", Help: "WebSocket reconnect attempts after a mid-call drop."}),
		alerts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "switchboard_alerts_total", Help: "Alerts raised, by type."}, []string{"type"}),
		outboxOutcomes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "switchboard_outbox_deliveries_total", Help: "Outbox delivery attempts, by outcome."}, []string{"outcome"}),
		hookDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "switchboard_hook_duration_seconds", Help: "Hook attempts of calls, from the request to the answer's end, by transport and result class.",
			Buckets: latencyBuckets}, []string{"transport", "class"}),
		outboxDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "switchboard_outbox_delivery_duration_seconds", Help: "Outbox delivery attempts (status notifications, webhooks), by outcome.",
			Buckets: latencyBuckets}, []string{"outcome"}),
	}
	m.Registry.MustRegister(m.callsActive, m.callsTotal, m.hookAttempts, m.hookRetries, m.wsReconnects,
		m.alerts, m.outboxOutcomes, m.hookDuration, m.outboxDuration,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// WatchStore exports the outbox store's single writer, read at each scrape: the rate
// of busy seconds is the share of time it was writing, and near 1 says writes queue
// for it (the outbox's throughput bound on SQLite). Call it once per registry.
func (m *Metrics) WatchStore(stats func() sqlitestore.Stats) {
	counter := func(name, help string, value func(sqlitestore.Stats) float64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help},
			func() float64 { return value(stats()) })
	}
	m.Registry.MustRegister(
		counter("switchboard_outbox_store_transactions_total", "Write transactions of the outbox store.",
			func(s sqlitestore.Stats) float64 { return float64(s.Transactions) }),
		counter("switchboard_outbox_store_writes_total", "Writes (publishes, claims, recorded batches) the outbox store's transactions grouped.",
			func(s sqlitestore.Stats) float64 { return float64(s.Writes) }),
		counter("switchboard_outbox_store_busy_seconds_total", "Time the outbox store's single writer spent in write transactions.",
			func(s sqlitestore.Stats) float64 { return s.Busy.Seconds() }),
		counter("switchboard_outbox_store_commit_seconds_total", "Time the outbox store's writer spent committing (writing and syncing the WAL).",
			func(s sqlitestore.Stats) float64 { return s.Committing.Seconds() }),
	)
}

// CallStarted counts a call in progress.
func (m *Metrics) CallStarted() { m.callsActive.Inc() }

// CallEnded counts a call's end, by its reason.
func (m *Metrics) CallEnded(reason string) {
	m.callsActive.Dec()
	m.callsTotal.WithLabelValues(reason).Inc()
}

// ObserveEvent counts a call's timeline event: hook attempts and retries,
// reconnects, alerts.
func (m *Metrics) ObserveEvent(e callctl.Event) {
	switch e.Kind {
	case callctl.KindHookAttempt:
		m.hookAttempts.WithLabelValues(e.Class).Inc()
		m.hookDuration.WithLabelValues(e.Transport, e.Class).Observe(e.Duration.Seconds())
	case callctl.KindHookRetry:
		m.hookRetries.Inc()
	case callctl.KindWSReconnect:
		m.wsReconnects.Inc()
	case callctl.KindAlert:
		m.AlertRaised(string(e.AlertType))
	}
}

// AlertRaised counts an alert raised outside a call's timeline (a status
// notification given up).
func (m *Metrics) AlertRaised(alertType string) { m.alerts.WithLabelValues(alertType).Inc() }

// latencyBuckets span a loopback answer (a millisecond) to a hook timeout (10 s
// by default, JAMBONES_HTTP_TIMEOUT) and beyond.
var latencyBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}

// ObserveDelivery counts outbox attempts by outcome and times them.
func (m *Metrics) ObserveDelivery(_ outbox.Delivery, a outbox.Attempt) {
	m.outboxOutcomes.WithLabelValues(string(a.Class)).Inc()
	if a.Number > 0 { // attempt 0 records an event held for a paused endpoint: no request
		m.outboxDuration.WithLabelValues(string(a.Class)).Observe(a.Duration.Seconds())
	}
}

// WatchQueue exports the outbox's queue at each scrape: the pending, held and
// failed deliveries (outboxdriver.QueueDepth) and the lag of the oldest due one,
// each 0 when there is none. A scrape whose read fails shows none of them rather
// than stale values. Call it once per registry.
func (m *Metrics) WatchQueue(depth func(ctx context.Context, now time.Time) (outboxdriver.QueueDepth, error)) {
	m.Registry.MustRegister(&queueCollector{depth: depth,
		depthDesc: prometheus.NewDesc("switchboard_outbox_queue_depth", "Outbox deliveries waiting (pending, held for a paused or held endpoint) or given up (failed).", []string{"state"}, nil),
		lagDesc:   prometheus.NewDesc("switchboard_outbox_queue_lag_seconds", "How long the oldest due outbox delivery has waited; 0 when none is due.", nil, nil),
	})
}

type queueCollector struct {
	depth              func(ctx context.Context, now time.Time) (outboxdriver.QueueDepth, error)
	depthDesc, lagDesc *prometheus.Desc
}

func (q *queueCollector) Describe(ch chan<- *prometheus.Desc) { ch <- q.depthDesc; ch <- q.lagDesc }

func (q *queueCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	now := time.Now()
	d, err := q.depth(ctx, now)
	if err != nil {
		return
	}
	for state, n := range map[string]int64{"pending": d.Pending, "held": d.Held, "failed": d.Failed} {
		ch <- prometheus.MustNewConstMetric(q.depthDesc, prometheus.GaugeValue, float64(n), state)
	}
	lag := 0.0
	if !d.OldestDue.IsZero() {
		lag = max(now.Sub(d.OldestDue), 0).Seconds()
	}
	ch <- prometheus.MustNewConstMetric(q.lagDesc, prometheus.GaugeValue, lag)
}
