package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/switchboard-voice/switchboard/callctl"
	"github.com/switchboard-voice/switchboard/outbox"
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
	outboxLag      prometheus.Gauge
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
		outboxLag: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "switchboard_outbox_queue_lag_seconds", Help: "Age of the oldest due outbox delivery."}),
	}
	m.Registry.MustRegister(m.callsActive, m.callsTotal, m.hookAttempts, m.hookRetries, m.wsReconnects,
		m.alerts, m.outboxOutcomes, m.outboxLag,
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

// ObserveDelivery counts outbox attempts by outcome and tracks the queue lag.
func (m *Metrics) ObserveDelivery(_ outbox.Delivery, a outbox.Attempt) {
	m.outboxOutcomes.WithLabelValues(string(a.Class)).Inc()
	if !a.ScheduledAt.IsZero() {
		m.outboxLag.Set(max(a.At.Sub(a.ScheduledAt), 0).Seconds())
	}
}
