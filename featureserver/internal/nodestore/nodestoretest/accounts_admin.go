package nodestoretest

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore"
)

// testListAccounts: every account, oldest first then by sid, with its secrets.
func testListAccounts(t *testing.T, s nodestore.Store) {
	if got, err := s.ListAccounts(ctx); err != nil || got == nil || len(got) != 0 {
		t.Fatalf("no accounts: %+v, %v; want an empty list", got, err)
	}
	late, b, a := account("late"), account("b"), account("a")
	late.CreatedAt = t0.Add(time.Hour)
	for _, acct := range []nodestore.Account{late, b, a} {
		mustPut(t, s, nodestore.PutAccountParams{Account: acct})
	}
	got, err := s.ListAccounts(ctx)
	if want := []nodestore.Account{a, b, late}; err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("ListAccounts: %+v, %v; want %+v", got, err, want)
	}
}

// testRotation: the previous webhook secret and its grace period read back as put;
// a token put with ReplaceTokens revokes the account's other tokens and only
// those.
func testRotation(t *testing.T, s nodestore.Store) {
	a := account("a")
	a.PreviousWebhookSecret, a.PreviousSecretUntil = "old secret", t0.Add(24*time.Hour)
	old1, old2, other, rotated := nodestore.HashToken("old1"), nodestore.HashToken("old2"), nodestore.HashToken("b's"), nodestore.HashToken("new")
	mustPut(t, s, nodestore.PutAccountParams{Account: a, TokenHash: old1, Origin: nodestore.TokenFromAPI})
	mustPut(t, s, nodestore.PutAccountParams{Account: a, TokenHash: old2, Origin: nodestore.TokenFromBootstrap})
	mustPut(t, s, nodestore.PutAccountParams{Account: account("b"), TokenHash: other, Origin: nodestore.TokenFromAPI})
	if got, err := s.GetAccount(ctx, "a"); err != nil || got != a {
		t.Fatalf("GetAccount: %+v, %v; want %+v", got, err, a)
	}
	mustPut(t, s, nodestore.PutAccountParams{Account: a, TokenHash: rotated, Origin: nodestore.TokenFromAPI, ReplaceTokens: true})
	for _, h := range []string{old1, old2} {
		if _, err := s.AccountByToken(ctx, h); !errors.Is(err, nodestore.ErrNotFound) {
			t.Fatalf("a replaced token still works: %v", err)
		}
	}
	if got, err := s.AccountByToken(ctx, rotated); err != nil || got != a {
		t.Fatalf("the new token: %+v, %v", got, err)
	}
	if got, err := s.AccountByToken(ctx, other); err != nil || got.Sid != "b" {
		t.Fatalf("another account's token: %+v, %v", got, err)
	}
	a.PreviousWebhookSecret, a.PreviousSecretUntil = "", time.Time{}
	mustPut(t, s, nodestore.PutAccountParams{Account: a})
	if got, err := s.GetAccount(ctx, "a"); err != nil || got != a {
		t.Fatalf("the previous secret cleared: %+v, %v; want %+v", got, err, a)
	}
}

// testDeleteAccount: the account goes with its tokens, applications, calls, alerts,
// status hooks and notice settings; another account keeps its own; a missing one
// is ErrNotFound.
func testDeleteAccount(t *testing.T, s nodestore.Store) {
	for _, sid := range []string{"a", "b"} {
		mustPut(t, s, nodestore.PutAccountParams{Account: account(sid), TokenHash: nodestore.HashToken(sid), Origin: nodestore.TokenFromAPI})
		if err := s.SaveApplication(ctx, nodestore.Application{Sid: "app-" + sid, AccountSid: sid, Name: "n", CallHook: nodestore.HookSpec{URL: "http://h/"}, CreatedAt: t0}); err != nil {
			t.Fatal(err)
		}
		saveCalls(t, s, call(sid, "call-"+sid, t0, false))
		if err := s.AddAlert(ctx, nodestore.Alert{AccountSid: sid, Type: "webhook-failure", CallSid: "call-" + sid, Time: t0}); err != nil {
			t.Fatal(err)
		}
		if err := s.SaveStatusHook(ctx, nodestore.SaveStatusHookParams{AccountSid: sid, URL: "http://h/s", Hook: nodestore.HookSpec{Method: "GET"}, At: t0}); err != nil {
			t.Fatal(err)
		}
		if err := s.SaveNotifications(ctx, nodestore.SaveNotificationsParams{AccountSid: sid, Notifications: nodestore.Notifications{WebhookURL: "http://h/n", Emails: []string{}}, At: t0}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.DeleteAccount(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetAccount(ctx, "a"); !errors.Is(err, nodestore.ErrNotFound) {
		t.Fatalf("the deleted account: %v", err)
	}
	if _, err := s.AccountByToken(ctx, nodestore.HashToken("a")); !errors.Is(err, nodestore.ErrNotFound) {
		t.Fatalf("the deleted account's token: %v", err)
	}
	if apps, err := s.ListApplications(ctx, "a"); err != nil || len(apps) != 0 {
		t.Fatalf("its applications: %+v, %v", apps, err)
	}
	if _, err := s.GetCall(ctx, nodestore.GetCallParams{AccountSid: "a", CallSid: "call-a"}); !errors.Is(err, nodestore.ErrNotFound) {
		t.Fatalf("its call: %v", err)
	}
	if alerts, err := s.ListAlerts(ctx, nodestore.ListAlertsParams{AccountSid: "a", Limit: 10}); err != nil || len(alerts) != 0 {
		t.Fatalf("its alerts: %+v, %v", alerts, err)
	}
	if _, err := s.GetStatusHook(ctx, nodestore.GetStatusHookParams{AccountSid: "a", URL: "http://h/s"}); !errors.Is(err, nodestore.ErrNotFound) {
		t.Fatalf("its status hook: %v", err)
	}
	if n, err := s.GetNotifications(ctx, "a"); err != nil || n.WebhookURL != "" {
		t.Fatalf("its notice settings: %+v, %v", n, err)
	}
	if _, err := s.GetCall(ctx, nodestore.GetCallParams{AccountSid: "b", CallSid: "call-b"}); err != nil {
		t.Fatalf("another account's call: %v", err)
	}
	if got, err := s.AccountByToken(ctx, nodestore.HashToken("b")); err != nil || got.Sid != "b" {
		t.Fatalf("another account's token: %+v, %v", got, err)
	}
	if err := s.DeleteAccount(ctx, "a"); !errors.Is(err, nodestore.ErrNotFound) {
		t.Fatalf("deleting it again: %v, want ErrNotFound", err)
	}
}
