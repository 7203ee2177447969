package nodestoretest

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore"
	"github.com/switchboard-voice/switchboard/internal/secretbox"
)

// SecretStore is a Store that can seal its secrets again under its first key.
type SecretStore interface {
	nodestore.Store
	ResealSecrets(ctx context.Context) (int, error)
}

// SecretFactory opens a store with keys k on the one database of the test (every
// call opens the same database); it registers the store's cleanup. The test closes
// each store before it opens the next.
type SecretFactory func(t *testing.T, k *secretbox.Keyring) SecretStore

// RunSecrets checks that with a key every secret a store keeps is sealed at rest
// (dump returns the database's raw bytes, none of which may hold a secret), reads
// back as it was written, cannot be read without its key, and that ResealSecrets
// moves every secret to a new first key, after which the old key is not needed.
func RunSecrets(t *testing.T, open SecretFactory, dump func(t *testing.T) []byte) {
	k1, k2 := secretbox.NewKey(), secretbox.NewKey()
	ring := func(keys string) *secretbox.Keyring {
		r, err := secretbox.Parse(keys)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	secrets := []string{"acct-secret-9f3e1", "prev-secret-9f3e1", "call-hook-pass-9f3e1", "status-app-pass-9f3e1",
		"status-hook-pass-9f3e1", "recovery-pass-9f3e1"}
	a := account("a")
	a.WebhookSecret, a.PreviousWebhookSecret, a.PreviousSecretUntil = secrets[0], secrets[1], t0.Add(24*time.Hour)
	app := application("a", "app", t0)
	app.CallHook.Username, app.CallHook.Password = "u", secrets[2]
	app.CallStatusHook = &nodestore.HookSpec{URL: "https://app.example/status", Username: "u", Password: secrets[3]}
	hook := nodestore.SaveStatusHookParams{AccountSid: "a", URL: "https://app.example/status",
		Hook: nodestore.HookSpec{Method: "POST", Username: "u", Password: secrets[4]}, At: t0}
	c := call("a", "c1", t0, true)
	c.Recovery = &nodestore.CallRecovery{AppURL: "https://app.example/", StatusHook: nodestore.HookSpec{URL: "https://app.example/status", Password: secrets[5]}}

	check := func(s nodestore.Store, when string) {
		t.Helper()
		if got, err := s.GetAccount(ctx, "a"); err != nil || got != a {
			t.Fatalf("%s: account %+v, %v", when, got, err)
		}
		if got, err := s.GetApplication(ctx, nodestore.GetApplicationParams{AccountSid: "a", Sid: "app"}); err != nil ||
			got.CallHook != app.CallHook || *got.CallStatusHook != *app.CallStatusHook {
			t.Fatalf("%s: application %+v, %v", when, got, err)
		}
		if got, err := s.GetStatusHook(ctx, nodestore.GetStatusHookParams{AccountSid: "a", URL: hook.URL}); err != nil || got.Password != secrets[4] {
			t.Fatalf("%s: status hook %+v, %v", when, got, err)
		}
		active, err := s.ActiveCalls(ctx)
		if err != nil || len(active) != 1 || active[0].Recovery == nil || active[0].Recovery.StatusHook.Password != secrets[5] {
			t.Fatalf("%s: active calls %+v, %v", when, active, err)
		}
	}
	inClear := func(when string) {
		t.Helper()
		raw := dump(t)
		for _, secret := range secrets {
			if bytes.Contains(raw, []byte(secret)) {
				t.Errorf("%s: the database holds %q in clear", when, secret)
			}
		}
	}

	s := open(t, ring(k1))
	mustPut(t, s, nodestore.PutAccountParams{Account: a, TokenHash: nodestore.HashToken("tok"), Origin: nodestore.TokenFromAPI})
	if err := s.SaveApplication(ctx, app); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveStatusHook(ctx, hook); err != nil {
		t.Fatal(err)
	}
	saveCalls(t, s, c)
	check(s, "sealed under the first key")
	if got, err := s.AccountByToken(ctx, nodestore.HashToken("tok")); err != nil || got != a {
		t.Fatalf("account by token: %+v, %v", got, err)
	}
	s.Close()
	inClear("with a key")

	s = open(t, nil)
	if _, err := s.GetAccount(ctx, "a"); !errors.Is(err, secretbox.ErrNoKey) {
		t.Errorf("reading without the key: %v, want ErrNoKey", err)
	}
	if _, err := s.GetStatusHook(ctx, nodestore.GetStatusHookParams{AccountSid: "a", URL: hook.URL}); !errors.Is(err, secretbox.ErrNoKey) {
		t.Errorf("a status hook without the key: %v, want ErrNoKey", err)
	}
	s.Close()

	s = open(t, ring(k2+","+k1)) // a new key first, the old one to read
	check(s, "with the old key second")
	n, err := s.ResealSecrets(ctx)
	if err != nil || n != len(secrets) {
		t.Fatalf("ResealSecrets: %d, %v; want %d", n, err, len(secrets))
	}
	if n, err := s.ResealSecrets(ctx); err != nil || n != 0 {
		t.Fatalf("ResealSecrets again: %d, %v; want 0", n, err)
	}
	s.Close()
	s = open(t, ring(k2)) // the old key dropped
	check(s, "resealed under the new key")
	s.Close()
	inClear("after rotation")
}
