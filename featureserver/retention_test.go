package featureserver

import (
	"errors"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore"
)

// Records of ended calls older than the retention window go, in batches of the
// bound; an active call's record and newer ones stay.
func TestRetentionPurgesExpiredCalls(t *testing.T) {
	t.Parallel()
	// A node that is not running: its own purge loop (Run) would race this one.
	cfg := testConfig(t)
	cfg.CallRetention = 48 * time.Hour
	node, err := NewNode(t.Context(), cfg, NodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = node.closeStores() })
	now := time.Now().UTC()
	save := func(sid string, age time.Duration, active bool) {
		t.Helper()
		c := nodestore.Call{CallSid: sid, AccountSid: "a", Direction: "outbound", CallStatus: "completed", Active: active, CreatedAt: now.Add(-age)}
		if err := node.store.SaveCall(t.Context(), c); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 7 {
		save("old"+string(rune('0'+i)), 49*time.Hour+time.Duration(i)*time.Minute, false)
	}
	save("old-active", 72*time.Hour, true)
	save("recent", 47*time.Hour, false)
	removed, err := node.purgeExpired(t.Context(), now, 3)
	if err != nil || removed != 7 {
		t.Fatalf("purged %d, %v; want the 7 expired records", removed, err)
	}
	for _, sid := range []string{"old-active", "recent"} {
		if _, err := node.store.GetCall(t.Context(), nodestore.GetCallParams{AccountSid: "a", CallSid: sid}); err != nil {
			t.Errorf("%s was purged: %v", sid, err)
		}
	}
	if _, err := node.store.GetCall(t.Context(), nodestore.GetCallParams{AccountSid: "a", CallSid: "old0"}); !errors.Is(err, nodestore.ErrNotFound) {
		t.Errorf("an expired record stays: %v", err)
	}
}

func TestRetentionSetting(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		value string
		want  time.Duration
		ok    bool
	}{{"", 7 * 24 * time.Hour, true}, {"1", time.Hour, true}, {"0", 0, false}, {"7d", 0, false}, {"87601", 0, false}} {
		c, err := LoadConfig(func(k string) string {
			if k == EnvRetention {
				return tc.value
			}
			return ""
		}, nil)
		if tc.ok && (err != nil || c.CallRetention != tc.want) || !tc.ok && !errors.Is(err, ErrBadConfig) {
			t.Errorf("%s=%q: %v, %v", EnvRetention, tc.value, c.CallRetention, err)
		}
	}
}
