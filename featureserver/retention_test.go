package featureserver

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore"
	"github.com/switchboard-voice/switchboard/outbox"
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

// SWITCHBOARD_OUTBOX_RETENTION: a duration, days or bare hours, from 1 h to a year;
// anything else names the variable.
func TestOutboxRetentionSetting(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		value string
		want  time.Duration
		ok    bool
	}{{"", 7 * 24 * time.Hour, true}, {"72h", 72 * time.Hour, true}, {"14d", 14 * 24 * time.Hour, true}, {"36", 36 * time.Hour, true},
		{"90m", 90 * time.Minute, true}, {"30m", 0, false}, {"366d", 0, false}, {"-1", 0, false}, {"1w", 0, false}, {"d", 0, false}} {
		c, err := LoadConfig(func(k string) string {
			if k == EnvOutboxRetention {
				return tc.value
			}
			return ""
		}, nil)
		switch {
		case tc.ok && (err != nil || c.Outbox.Retention != tc.want):
			t.Errorf("%q: %v %v, want %v", tc.value, c.Outbox.Retention, err, tc.want)
		case !tc.ok && (err == nil || !errors.Is(err, ErrBadConfig) || !strings.Contains(err.Error(), EnvOutboxRetention)):
			t.Errorf("%q: %v, want an error naming %s", tc.value, err, EnvOutboxRetention)
		}
	}
	if err := (Config{Outbox: OutboxSettings{Retention: time.Minute}}).WithDefaults().validate(); err == nil || !strings.Contains(err.Error(), "Config.Outbox.Retention") {
		t.Fatalf("validate: %v", err)
	}
}

// The node's outbox purges what is older than the node's retention, not the
// outbox's default: an event three hours old goes under a two-hour retention.
func TestOutboxRetentionReachesThePurge(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		retention time.Duration
		purged    bool
	}{{2 * time.Hour, true}, {0, false}} {
		cfg := testConfig(t)
		cfg.Outbox.Retention = tc.retention
		node, err := NewNode(t.Context(), cfg, NodeOptions{})
		if err != nil {
			t.Fatal(err)
		}
		pub, err := node.outbox.Publish(t.Context(), outbox.Event{Account: "a", Type: "x.y", Data: json.RawMessage(`{}`)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := node.db.sqlite.DB().ExecContext(t.Context(), `UPDATE outbox_events SET stored_at = stored_at - ?`, (3 * time.Hour).Microseconds()); err != nil {
			t.Fatal(err)
		}
		if _, _, err := node.outbox.Purge(t.Context()); err != nil {
			t.Fatal(err)
		}
		_, err = node.outbox.GetEvent(t.Context(), "a", pub.Event.ID)
		if gone := errors.Is(err, outbox.ErrNotFound); gone != tc.purged {
			t.Errorf("retention %v: the 3 h old event purged %v (%v), want %v", cfg.Outbox.Retention, gone, err, tc.purged)
		}
		_ = node.closeStores()
	}
}
