package nodestoretest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore"
)

// testPing: an open store answers.
func testPing(t *testing.T, s nodestore.Store) {
	if err := s.Ping(ctx); err != nil {
		t.Fatal(err)
	}
}

// testCanceledContext: with ctx ended, every write fails and keeps nothing.
func testCanceledContext(t *testing.T, s nodestore.Store) {
	putAccounts(t, s, "b")
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	writes := map[string]error{
		"PutAccount":      s.PutAccount(canceled, nodestore.PutAccountParams{Account: account("a"), TokenHash: nodestore.HashToken("t"), Origin: nodestore.TokenFromAPI}),
		"SaveApplication": s.SaveApplication(canceled, application("b", "app", t0)),
		"AddAlert":        s.AddAlert(canceled, nodestore.Alert{AccountSid: "a", Type: "webhook-failure", Time: t0}),
		"SaveCall":        s.SaveCall(canceled, call("a", "c", t0, true)),
		"LeaseNode":       s.LeaseNode(canceled, nodestore.LeaseNodeParams{ID: "n", URL: "http://n", TTL: time.Hour}),
		"SaveStatusHook":  s.SaveStatusHook(canceled, nodestore.SaveStatusHookParams{AccountSid: "a", URL: "https://h/", At: t0}),
		"CreateSession":   s.CreateSession(canceled, nodestore.CreateSessionParams{Session: session("s", "b", "", t0), MaxPerAccount: 1}),
		"SaveNotifications": s.SaveNotifications(canceled, nodestore.SaveNotificationsParams{AccountSid: "b",
			Notifications: nodestore.Notifications{Emails: []string{"x@example.com"}}, At: t0}),
	}
	for name, err := range writes {
		if err == nil {
			t.Errorf("%s with an ended context succeeded", name)
		}
	}
	if _, err := s.InterruptActiveCalls(canceled, func(c nodestore.Call) nodestore.Call { return c }); err == nil {
		t.Error("InterruptActiveCalls with an ended context succeeded")
	}
	if _, err := s.InterruptLostCalls(canceled, nodestore.InterruptLostCallsParams{}, func(c nodestore.Call) nodestore.Call { return c }); err == nil {
		t.Error("InterruptLostCalls with an ended context succeeded")
	}
	if _, err := s.GetNode(ctx, "n"); !errors.Is(err, nodestore.ErrNotFound) {
		t.Errorf("node: %v, want ErrNotFound", err)
	}
	if _, err := s.GetAccount(ctx, "a"); !errors.Is(err, nodestore.ErrNotFound) {
		t.Errorf("account: %v, want ErrNotFound", err)
	}
	if _, err := s.AccountByToken(ctx, nodestore.HashToken("t")); !errors.Is(err, nodestore.ErrNotFound) {
		t.Errorf("token: %v, want ErrNotFound", err)
	}
	if _, err := s.GetApplication(ctx, nodestore.GetApplicationParams{AccountSid: "b", Sid: "app"}); !errors.Is(err, nodestore.ErrNotFound) {
		t.Errorf("application: %v, want ErrNotFound", err)
	}
	if alerts, err := s.ListAlerts(ctx, nodestore.ListAlertsParams{AccountSid: "a", Limit: 10}); err != nil || len(alerts) != 0 {
		t.Errorf("alerts: %v, %v", alerts, err)
	}
	if _, err := s.GetCall(ctx, nodestore.GetCallParams{AccountSid: "a", CallSid: "c"}); !errors.Is(err, nodestore.ErrNotFound) {
		t.Errorf("call: %v, want ErrNotFound", err)
	}
	if _, err := s.GetStatusHook(ctx, nodestore.GetStatusHookParams{AccountSid: "a", URL: "https://h/"}); !errors.Is(err, nodestore.ErrNotFound) {
		t.Errorf("status hook: %v, want ErrNotFound", err)
	}
	if n, err := s.GetNotifications(ctx, "b"); err != nil || len(n.Emails) != 0 {
		t.Errorf("notifications: %+v, %v; want none", n, err)
	}
}
