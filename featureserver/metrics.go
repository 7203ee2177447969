package featureserver

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/switchboard-voice/switchboard/callctl"
	"github.com/switchboard-voice/switchboard/outbox/sqlitestore"
)

// Metrics are the node's Prometheus metrics, on a registry of their own so that
// several nodes (tests) can live in one process.
type Metrics struct {
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

// NewMetrics registers the node's metrics and the Go runtime's.
func NewMetrics() *Metrics {
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

// watchStore exports the outbox store's single writer, read at each scrape: the rate
// of busy seconds is the share of time it was writing, and near 1 says writes queue
// for it (the outbox's throughput bound on SQLite).
func (m *Metrics) watchStore(stats func() sqlitestore.Stats) {
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

// observe counts a timeline event.
func (m *Metrics) observe(e callctl.Event) {
	switch e.Kind {
	case callctl.KindHookAttempt:
		m.hookAttempts.WithLabelValues(e.Class).Inc()
	case callctl.KindHookRetry:
		m.hookRetries.Inc()
	case callctl.KindWSReconnect:
		m.wsReconnects.Inc()
	case callctl.KindAlert:
		m.alerts.WithLabelValues(string(e.AlertType)).Inc()
	}
}
