package statushooks

import (
	"context"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"

	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore"
	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore/sqlitenode"
	"github.com/switchboard-voice/switchboard/outbox"
	"github.com/switchboard-voice/switchboard/outbox/sqlitestore"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// When an account's webhook secret changes (a bootstrap file gives a new one), its
// existing status hook endpoints sign with the status webhook secret of the new one,
// the secret GET /v1/Accounts/{account} shows.
func TestStatusEndpointFollowsTheAccountSecret(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	st, err := sqlitenode.Open(ctx, filepath.Join(dir, "node.db"), sqlitenode.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	obStore, err := sqlitestore.Open(ctx, filepath.Join(dir, "outbox.db"), sqlitestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer obStore.Close()
	hook := nodestore.HookSpec{URL: "https://app.example.com/status"}
	var ids []string
	for _, secret := range []string{"first-secret", "second-secret"} {
		p, err := Open(ctx, outbox.Config{Store: obStore}, Options{Store: st}) // a fresh node: nothing cached
		if err != nil {
			t.Fatal(err)
		}
		id, err := p.endpoint(ctx, nodestore.Account{Sid: "AC1", WebhookSecret: secret}, hook, hook.URL)
		if err != nil {
			t.Fatal(err)
		}
		ep, err := p.Outbox().GetEndpoint(ctx, "AC1", id)
		if err != nil || len(ep.Secrets) != 1 || ep.Secrets[0].Key != SigningSecret(secret) {
			t.Fatalf("with %s: %v, keys %d", secret, err, len(ep.Secrets))
		}
		ids = append(ids, id)
	}
	if ids[0] != ids[1] {
		t.Fatalf("a second endpoint was made: %v", ids)
	}
}

func TestCallSidOfEventID(t *testing.T) {
	t.Parallel()
	for id, want := range map[string]string{
		"call-status:5f0c1f6e-0000-4000-8000-000000000001:3": "5f0c1f6e-0000-4000-8000-000000000001",
		"call-status:abc": "abc",
		"evt_other:abc:1": "",
		"":                "",
	} {
		if got := callSidOf(id); got != want {
			t.Errorf("callSidOf(%q) = %q, want %q", id, got, want)
		}
	}
}

// A notification given up after an error status is alerted as
// webhook-connection-failure, as after a network failure: jambonz's HTTP requestor
// raises webhook-failure only for an error named StatusError, which its undici client
// never throws (lib/utils/http-requestor.js request, lib/utils/error.js
// HTTPResponseError).
func TestGivenUpAlertIsAConnectionFailure(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	st, err := sqlitenode.Open(ctx, filepath.Join(dir, "node.db"), sqlitenode.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	obStore, err := sqlitestore.Open(ctx, filepath.Join(dir, "outbox.db"), sqlitestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer obStore.Close()
	alerts := make(chan nodestore.Alert, 8)
	p, err := Open(ctx, outbox.Config{Store: obStore}, Options{Store: st, OnAlert: func(a nodestore.Alert) { alerts <- a }})
	if err != nil {
		t.Fatal(err)
	}
	for _, class := range []outbox.AttemptClass{outbox.ClassHTTP5xx, outbox.ClassHTTP4xx, outbox.ClassNetwork} {
		p.alertGivenUp(outbox.Delivery{ID: "d1", EventType: EventType, Status: outbox.DeliveryFailed, Account: "AC1",
			EventID: "call-status:CA1:1"}, outbox.Attempt{Class: class, Error: "x"})
		p.Wait()
		if a := <-alerts; a.Type != "webhook-connection-failure" || a.CallSid != "CA1" {
			t.Errorf("after %s: alert %+v, want webhook-connection-failure for CA1", class, a)
		}
	}
}
