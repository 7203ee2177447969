package outbox

import (
	"testing"

	"github.com/switchboard-voice/switchboard/retry"
)

// TestOutcomeClasses: every class the retry core and the transport produce is
// stored under one of the names docs/outbox.md §2 step 4 gives.
func TestOutcomeClasses(t *testing.T) {
	want := map[retry.Class]retry.Class{
		retry.Success: "success", retry.Gone: "gone", retry.Throttled: "throttled",
		retry.Status4xx: "http_4xx", retry.Status5xx: "http_5xx", retry.Redirect: "redirect",
		retry.ResponseTimeout: "timeout", retry.Connect: "network", retry.HandshakeTimeout: "network",
		retry.Permanent: "network", retry.Unparseable: "network", retry.UnexpectedStatus: "network",
		retry.EgressRefused: "egress_refused", retry.Internal: "internal",
	}
	for in, out := range want {
		if got := outcomeClass(in); got != out {
			t.Errorf("outcomeClass(%s) = %s, want %s", in, got, out)
		}
	}
}
