package sqlitestore

import (
	"reflect"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
)

// TestNormalizedTimesMatchesRoundTrip: the shortcut the batch takes for health changes
// (times only, JSON columns from the cached endpoint) gives what the full round trip
// through the columns gives.
func TestNormalizedTimesMatchesRoundTrip(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.FixedZone("x", 3600))
	ep := outboxdriver.Endpoint{ID: "ep_1", Account: "a", URL: "https://example.com/h", Events: []string{"call.status"},
		Secrets: []outboxdriver.Secret{{Key: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}}, Profile: "standard",
		Overrides: outboxdriver.Overrides{MaxAttempts: new(int), ScheduleSeconds: []float64{1, 2}},
		Status:    outboxdriver.EndpointActive, Failures: 3, FailingSince: &at, LastDeliveryAt: &at, HoldUntil: &at, CreatedAt: at}
	cached, err := normalizedEndpoint(ep)
	if err != nil {
		t.Fatal(err)
	}
	changed := ep // what decide returns: the cached endpoint with its health changed
	changed.Events, changed.Secrets, changed.Overrides = cached.Events, cached.Secrets, cached.Overrides
	later := at.Add(1500 * time.Nanosecond)
	changed.Failures, changed.LastDeliveryAt, changed.FailingSince = 0, &later, nil
	if !sameEncodedFields(cached, changed) {
		t.Fatal("sameEncodedFields: want true for a health change")
	}
	want, err := normalizedEndpoint(changed)
	if err != nil {
		t.Fatal(err)
	}
	if got := normalizedTimes(changed); !reflect.DeepEqual(got, want) {
		t.Fatalf("normalizedTimes = %+v\nround trip  = %+v", got, want)
	}
	other := changed
	other.Events = []string{"*"}
	if sameEncodedFields(cached, other) {
		t.Fatal("sameEncodedFields: want false when the events filter changed")
	}
}
