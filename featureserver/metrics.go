package featureserver

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/switchboard-voice/switchboard/callctl"
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
