package calls

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/callctl"
	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore"
	"github.com/switchboard-voice/switchboard/transport"
)

// stalledStore is a database that takes writes and never answers: each write waits
// for its context, after telling entered.
type stalledStore struct {
	nodestore.Store
	stallSaves, stallAlerts bool
	entered                 chan struct{}
}

func (s *stalledStore) stall(ctx context.Context) error {
	select {
	case s.entered <- struct{}{}:
	default:
	}
	<-ctx.Done()
	return ctx.Err()
}

func (s *stalledStore) SaveCall(ctx context.Context, c nodestore.Call) error {
	if s.stallSaves {
		return s.stall(ctx)
	}
	return s.Store.SaveCall(ctx, c)
}

func (s *stalledStore) AddAlert(ctx context.Context, a nodestore.Alert) error {
	if s.stallAlerts {
		return s.stall(ctx)
	}
	return s.Store.AddAlert(ctx, a)
}

func mustHook(t *testing.T, raw string) Hook {
	t.Helper()
	h, err := ParseHook(nodestore.HookSpec{URL: raw})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// Start gives up with the request: a database that does not answer holds the API
// request only until the request ends, and nothing runs.
func TestStartEndsWithTheRequest(t *testing.T) {
	t.Parallel()
	store := &stalledStore{Store: newStore(t), stallSaves: true, entered: make(chan struct{}, 1)}
	m := newManager(t, Options{Store: store, WriteTimeout: time.Hour})
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		<-store.entered
		cancel()
	}()
	_, err := m.Start(ctx, Request{Account: nodestore.Account{Sid: "a"}, CallHook: mustHook(t, "http://127.0.0.1:1/call")})
	if !errors.Is(err, context.Canceled) || m.Active() != 0 {
		t.Fatalf("Start: %v, %d active; want the request's cancellation and no call", err, m.Active())
	}
}

// Without an end of its own, the request's write still has WriteTimeout.
func TestStartWriteHasADeadline(t *testing.T) {
	t.Parallel()
	store := &stalledStore{Store: newStore(t), stallSaves: true, entered: make(chan struct{}, 1)}
	m := newManager(t, Options{Store: store, WriteTimeout: 50 * time.Millisecond})
	_, err := m.Start(context.Background(), Request{Account: nodestore.Account{Sid: "a"}, CallHook: mustHook(t, "http://127.0.0.1:1/call")})
	if !errors.Is(err, context.DeadlineExceeded) || m.Active() != 0 {
		t.Fatalf("Start: %v, %d active; want the write's deadline and no call", err, m.Active())
	}
}

// loopbackNetwork lets calls reach apps on this machine.
type loopbackNetwork struct{ hooks *transport.HookClient }

func (n loopbackNetwork) CallOptions(appURL string) callctl.Options {
	rules := transport.CallControlRules(true)
	return callctl.Options{AppURL: appURL, Hooks: n.hooks, EgressRules: rules}
}

func (n loopbackNetwork) CloseIdleConnections() { n.hooks.CloseIdleConnections() }

// A call whose alert the database does not take goes on and ends: the write gives up
// at its deadline, logged, instead of holding the call.
func TestCallWritesHaveADeadline(t *testing.T) {
	t.Parallel()
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		// An application alert (a REST call's call hook answering invalid verbs raises
		// none in jambonz: docs/compatibility.md §3).
		_, _ = w.Write([]byte(`[{"verb":"alert","message":"closed"}]`))
	}))
	t.Cleanup(app.Close)
	store := &stalledStore{Store: newStore(t), stallAlerts: true, entered: make(chan struct{}, 1)}
	network := loopbackNetwork{hooks: transport.NewHookClient(transport.HookClientOptions{Rules: transport.CallControlRules(true)})}
	t.Cleanup(network.CloseIdleConnections)
	m, err := New(Options{Store: store, Network: network, MaxCalls: 1, IdleLimit: time.Second, WriteTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	sid, err := m.Start(t.Context(), Request{Account: nodestore.Account{Sid: "a"}, CallHook: mustHook(t, app.URL+"/call")})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-m.Ended(sid):
	case <-time.After(30 * time.Second):
		t.Fatal("the call is held by the alert's write")
	}
	select {
	case <-store.entered:
	default:
		t.Fatal("the call raised no alert: the test tests nothing")
	}
	got, err := store.GetCall(t.Context(), nodestore.GetCallParams{AccountSid: "a", CallSid: sid})
	if err != nil || got.Active || got.Reason != "verbs-exhausted" {
		t.Fatalf("the call's record: %+v, %v", got, err)
	}
}
