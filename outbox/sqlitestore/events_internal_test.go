package sqlitestore

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
)

// TestRepublishMatchesDataStoredUncompacted: event data written before the outbox
// compacted it (spaced JSON) is still the same content as a republish of it.
func TestRepublishMatchesDataStoredUncompacted(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, "legacy.db", Options{})
	if _, err := s.db.Exec(`INSERT INTO outbox_events (id, account, type, created_at, stored_at, data)
		VALUES ('evt_old', 'acct', 't', 1, 1, '{ "a" : 1 }')`); err != nil {
		t.Fatal(err)
	}
	none := func(outboxdriver.Endpoint) (outboxdriver.Delivery, *outboxdriver.Attempt, bool) {
		return outboxdriver.Delivery{}, nil, false
	}
	pub, err := s.Publish(ctx, outboxdriver.PublishParams{Event: outboxdriver.Event{ID: "evt_old", Account: "acct", Type: "t", Data: []byte(`{"a":1}`)}, Now: time.Now(), Plan: none})
	if err != nil || !pub.Duplicate {
		t.Fatalf("republish: %+v, %v", pub, err)
	}
	if _, err := s.Publish(ctx, outboxdriver.PublishParams{Event: outboxdriver.Event{ID: "evt_old", Account: "acct", Type: "t", Data: []byte(`{"a":2}`)}, Now: time.Now(), Plan: none}); !errors.Is(err, outboxdriver.ErrConflict) {
		t.Fatalf("other data: %v", err)
	}
}
