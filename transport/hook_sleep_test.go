package transport_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/internal/testkit"
	"github.com/switchboard-voice/switchboard/transport"
)

// A request's own Sleep takes the waits between its attempts: a call on a simulated
// clock shares a client with others and lets only its own delays pass on its clock.
func TestHookRequestSleep(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(503) }))
	t.Cleanup(srv.Close)
	c, clientSleep := newHookClient(t, transport.HookClientOptions{})
	own := &testkit.SleepRecorder{}
	_, err := c.Do(context.Background(), transport.HookRequest{Target: mustTarget(t, srv.URL+"#rc=2&rp=5xx"), Sleep: own.Sleep})
	if err == nil {
		t.Fatal("a 503 succeeded")
	}
	if got, want := own.Delays(), []time.Duration{500 * time.Millisecond, time.Second}; !slices.Equal(got, want) {
		t.Errorf("request Sleep got %v, want %v", got, want)
	}
	if got := clientSleep.Delays(); len(got) != 0 {
		t.Errorf("the client's Sleep waited %v for a request with its own", got)
	}
}
