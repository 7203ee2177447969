package metrics

import (
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/callctl"
	"github.com/switchboard-voice/switchboard/outbox"
)

// Each figure counts what it is told, under its own labels.
func TestMetricsCount(t *testing.T) {
	t.Parallel()
	m := New()
	m.CallStarted()
	m.CallStarted()
	m.CallEnded("hangup-verb")
	for _, e := range []callctl.Event{
		{Kind: callctl.KindHookAttempt, Class: "success"},
		{Kind: callctl.KindHookAttempt, Class: "5xx"},
		{Kind: callctl.KindHookRetry},
		{Kind: callctl.KindWSReconnect},
		{Kind: callctl.KindAlert, AlertType: callctl.AlertInvalidAppPayload},
		{Kind: callctl.KindVerbStart},
	} {
		m.ObserveEvent(e)
	}
	m.AlertRaised(string(callctl.AlertWebhookFailure))
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	m.ObserveDelivery(outbox.Delivery{}, outbox.Attempt{Class: outbox.ClassSuccess, At: at, ScheduledAt: at.Add(-1500 * time.Millisecond)})
	for _, tt := range []struct {
		name, label string
		want        float64
	}{
		{"switchboard_calls_active", "", 1},
		{"switchboard_calls_total", "hangup-verb", 1},
		{"switchboard_hook_attempts_total", "success", 1},
		{"switchboard_hook_attempts_total", "5xx", 1},
		{"switchboard_hook_retries_total", "", 1},
		{"switchboard_ws_reconnects_total", "", 1},
		{"switchboard_alerts_total", string(callctl.AlertInvalidAppPayload), 1},
		{"switchboard_alerts_total", string(callctl.AlertWebhookFailure), 1},
		{"switchboard_outbox_deliveries_total", string(outbox.ClassSuccess), 1},
		{"switchboard_outbox_queue_lag_seconds", "", 1.5},
	} {
		if got := value(t, m, tt.name, tt.label); got != tt.want {
			t.Errorf("%s{%s}: %v, want %v", tt.name, tt.label, got, tt.want)
		}
	}
}

// value reads a gauge or a counter as the registry gathers it: the one sample of
// name whose only label has the value label ("" for a metric without labels).
func value(t *testing.T, m *Metrics, name, label string) float64 {
	t.Helper()
	families, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, s := range f.GetMetric() {
			if l := s.GetLabel(); (label == "" && len(l) == 0) || (len(l) == 1 && l[0].GetValue() == label) {
				if g := s.GetGauge(); g != nil {
					return g.GetValue()
				}
				return s.GetCounter().GetValue()
			}
		}
	}
	t.Fatalf("no sample of %s{%s}", name, label)
	return 0
}
