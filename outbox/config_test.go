package outbox_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/outbox"
)

// Open reports every bad field of its Config at once, each a *ValidationError, and
// opens nothing.
func TestOpenReportsEveryBadField(t *testing.T) {
	t.Parallel()
	_, err := outbox.Open(context.Background(), outbox.Config{Workers: -1, BatchSize: 20000, LeaseDuration: time.Second,
		Retention: time.Minute, PollInterval: -time.Second, GCPercent: -2})
	if !errors.Is(err, outbox.ErrInvalid) {
		t.Fatalf("Open: %v, want ErrInvalid", err)
	}
	var fields []string
	joined, ok := err.(interface{ Unwrap() []error })
	if !ok {
		t.Fatalf("Open: %T, want every field's error joined", err)
	}
	for _, e := range joined.Unwrap() {
		var ve *outbox.ValidationError
		if !errors.As(e, &ve) {
			t.Fatalf("%v is not a *ValidationError", e)
		}
		fields = append(fields, ve.Field)
	}
	want := []string{"Config.Store", "Config.Workers", "Config.BatchSize", "Config.LeaseDuration", "Config.PollInterval", "Config.Retention", "Config.GCPercent"}
	if !slices.Equal(fields, want) {
		t.Fatalf("fields reported %v, want %v", fields, want)
	}
}
