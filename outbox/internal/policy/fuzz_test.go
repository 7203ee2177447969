package policy_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/outbox/internal/policy"
	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
)

// FuzzResolve: overrides arrive as JSON from the API. Whatever they hold, the
// resolved policy is usable (attempts ≥ 1, a positive bounded timeout, waits not
// negative) or the error is a *ValidationError.
func FuzzResolve(f *testing.F) {
	f.Add("standard", []byte(`{"scheduleSeconds":[1,1],"maxAttempts":3}`))
	f.Add("sajn", []byte(`{"exponential":{"firstSeconds":1,"factor":2,"capSeconds":60}}`))
	f.Add("lucibook", []byte(`{"timeoutSeconds":1e308}`))
	f.Add("digize", []byte(`{"onGone":"explode"}`))
	f.Add("acme", []byte(`{}`))
	f.Fuzz(func(t *testing.T, profile string, raw []byte) {
		var o outboxdriver.Overrides
		if json.Unmarshal(raw, &o) != nil {
			return
		}
		p, err := policy.Resolve(profile, o)
		if err != nil {
			var ve *outboxdriver.ValidationError
			if !errors.As(err, &ve) || !errors.Is(err, outboxdriver.ErrInvalid) {
				t.Fatalf("error %v is not a ValidationError", err)
			}
			return
		}
		if p.MaxAttempts < 1 || p.Timeout <= 0 || p.Timeout > time.Minute || p.MaxInFlight < 1 {
			t.Fatalf("unusable policy %+v", p)
		}
		s := p.Schedule(nil)
		for k := 1; k <= p.MaxAttempts; k++ {
			if d, ok := s.Delay(k); ok && d < 0 {
				t.Fatalf("negative wait %v at %d", d, k)
			}
		}
	})
}
