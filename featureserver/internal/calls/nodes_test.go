package calls

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore"
)

// flakySaves fails the first fails SaveCalls, as a database that is away.
type flakySaves struct {
	nodestore.Store
	fails atomic.Int32
	tries atomic.Int32
}

func (f *flakySaves) SaveCall(ctx context.Context, c nodestore.Call) error {
	f.tries.Add(1)
	if f.fails.Add(-1) >= 0 {
		return errors.New("connection refused")
	}
	return f.Store.SaveCall(ctx, c)
}

// The final record of a call is saved once the database answers again, not lost with
// the first failure.
func TestFinalRecordSavedWhenTheDatabaseReturns(t *testing.T) {
	t.Parallel()
	inner := newStore(t)
	store := &flakySaves{Store: inner}
	store.fails.Store(2)
	m := newManager(t, Options{Store: store})
	ended := time.Now().UTC()
	view := nodestore.Call{CallSid: "c", AccountSid: "a", CallStatus: "completed", Reason: "hangup-verb", CreatedAt: ended, EndedAt: &ended}
	m.saveFinal(zerolog.Nop(), view)
	if n := store.tries.Load(); n != 3 {
		t.Fatalf("%d tries, want 3 (two failures, then the save)", n)
	}
	got, err := inner.GetCall(t.Context(), nodestore.GetCallParams{AccountSid: "a", CallSid: "c"})
	if err != nil || got.Reason != "hangup-verb" || got.Active {
		t.Fatalf("the record after the database returned: %+v, %v", got, err)
	}
}
