package metrics

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/callctl"
	"github.com/switchboard-voice/switchboard/outbox"
	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
)

// Each figure counts what it is told, under its own labels.
func TestMetricsCount(t *testing.T) {
	t.Parallel()
	m := New()
	m.CallStarted()
	m.CallStarted()
	m.CallEnded("hangup-verb")
	for _, e := range []callctl.Event{
		{Kind: callctl.KindHookAttempt, Class: "success", Transport: "http", Duration: 20 * time.Millisecond},
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
	m.ObserveDelivery(outbox.Delivery{}, outbox.Attempt{Number: 1, Class: outbox.ClassSuccess, At: at, ScheduledAt: at.Add(-1500 * time.Millisecond), Duration: 30 * time.Millisecond})
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

// Hook attempts and outbox deliveries land in their latency histograms.
func TestMetricsHistograms(t *testing.T) {
	t.Parallel()
	m := New()
	m.ObserveEvent(callctl.Event{Kind: callctl.KindHookAttempt, Transport: "http", Class: "success", Duration: 20 * time.Millisecond})
	m.ObserveEvent(callctl.Event{Kind: callctl.KindHookAttempt, Transport: "http", Class: "success", Duration: 2 * time.Second})
	m.ObserveDelivery(outbox.Delivery{}, outbox.Attempt{Number: 1, Class: outbox.ClassSuccess, Duration: 30 * time.Millisecond})
	m.ObserveDelivery(outbox.Delivery{}, outbox.Attempt{Number: 0, Class: "endpoint_paused"}) // no request: not timed
	for name, want := range map[string]struct {
		count uint64
		sum   float64
	}{
		"switchboard_hook_duration_seconds":            {2, 2.02},
		"switchboard_outbox_delivery_duration_seconds": {1, 0.03},
	} {
		families, err := m.Registry.Gather()
		if err != nil {
			t.Fatal(err)
		}
		var count uint64
		var sum float64
		for _, f := range families {
			if f.GetName() == name {
				for _, s := range f.GetMetric() {
					count += s.GetHistogram().GetSampleCount()
					sum += s.GetHistogram().GetSampleSum()
				}
			}
		}
		if count != want.count || math.Abs(sum-want.sum) > 1e-9 {
			t.Errorf("%s: %d samples summing %v, want %d summing %v", name, count, sum, want.count, want.sum)
		}
	}
}

// The queue gauges are read at each scrape: their values then, 0 for an empty
// queue and a lag of 0 when nothing is due, none at all when the read fails.
func TestMetricsQueue(t *testing.T) {
	t.Parallel()
	m := New()
	var depth outboxdriver.QueueDepth
	var fail error
	m.WatchQueue(func(context.Context, time.Time) (outboxdriver.QueueDepth, error) { return depth, fail })
	depth = outboxdriver.QueueDepth{Pending: 3, Held: 2, Failed: 1, OldestDue: time.Now().Add(-time.Minute)}
	for state, want := range map[string]float64{"pending": 3, "held": 2, "failed": 1} {
		if got := value(t, m, "switchboard_outbox_queue_depth", state); got != want {
			t.Errorf("depth %s = %v, want %v", state, got, want)
		}
	}
	if lag := value(t, m, "switchboard_outbox_queue_lag_seconds", ""); lag < 60 || lag > 3600 {
		t.Errorf("lag %v, want about a minute", lag)
	}
	depth = outboxdriver.QueueDepth{}
	for _, state := range []string{"pending", "held", "failed"} {
		if got := value(t, m, "switchboard_outbox_queue_depth", state); got != 0 {
			t.Errorf("depth %s of an empty queue = %v, want 0", state, got)
		}
	}
	if lag := value(t, m, "switchboard_outbox_queue_lag_seconds", ""); lag != 0 {
		t.Errorf("lag with nothing due = %v, want 0", lag)
	}
	fail = errors.New("database gone")
	families, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == "switchboard_outbox_queue_depth" || f.GetName() == "switchboard_outbox_queue_lag_seconds" {
			t.Errorf("%s shown while its read fails", f.GetName())
		}
	}
}
