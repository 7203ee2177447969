package callctl_test

import (
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/switchboard-voice/switchboard/callctl"
)

// An application that answers every hook with a redirect to itself ends with
// ReasonMaxRequests after exactly Options.MaxRequests requests, its timeline bounded.
func TestSelfRedirectingAppEndsAtMaxRequests(t *testing.T) {
	var hits atomic.Int64
	url := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `[{"verb":"redirect","actionHook":"/loop"}]`)
	}), false)
	o := baseOptions(t, url+"/loop")
	o.MaxRequests = 50
	r := run(t, o)
	wantEnd(t, r, callctl.StatusFailed, callctl.ReasonMaxRequests, 603)
	if n := hits.Load(); n != 50 {
		t.Errorf("the app got %d requests, want 50 (Options.MaxRequests)", n)
	}
	if len(r.Timeline) > 4*50 {
		t.Errorf("timeline of %d events for 50 requests", len(r.Timeline))
	}
}

// A timeline that reaches Options.MaxEvents ends the call with ReasonMaxEvents,
// the call.end event still recorded, before the requests limit.
func TestTimelineLimitEndsTheCall(t *testing.T) {
	url := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `[{"verb":"say","text":"a"},{"verb":"say","text":"b"},{"verb":"say","text":"c"},{"verb":"redirect","actionHook":"/loop"}]`)
	}), false)
	o := baseOptions(t, url+"/loop")
	o.MaxEvents = 100
	r := run(t, o)
	wantEnd(t, r, callctl.StatusCompleted, callctl.ReasonMaxEvents, 200)
	if n := len(r.Timeline); n < 100 || n > 110 {
		t.Errorf("timeline of %d events, want just over 100", n)
	}
	if last := r.Timeline[len(r.Timeline)-1]; last.Kind != callctl.KindCallEnd {
		t.Errorf("last event %s, want call.end", last.Kind)
	}
}
