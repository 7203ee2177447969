package outbox_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/switchboard-voice/switchboard/internal/secretbox"
	"github.com/switchboard-voice/switchboard/internal/testkit"
	"github.com/switchboard-voice/switchboard/outbox"
	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
	"github.com/switchboard-voice/switchboard/transport/webhooksig"
)

// With Config.Secrets the store only ever holds an endpoint's keys sealed, while
// every attempt is signed with them; after a new key is put first and the keys are
// sealed again, the old key can go and deliveries still verify; a removed
// endpoint's keys are erased.
func TestEndpointKeysAreSealedAtRest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rc := newReceiver(t, false, func(int, *http.Request) reply { return reply{status: http.StatusNoContent} })
	st := openStore(t)
	k1, k2 := secretbox.NewKey(), secretbox.NewKey()
	clock := testkit.NewClock()
	open := func(keys string) *outbox.Outbox {
		t.Helper()
		ring, err := secretbox.Parse(keys)
		if err != nil {
			t.Fatal(err)
		}
		ob, err := outbox.Open(ctx, outbox.Config{Store: st, Secrets: ring, HTTPClient: &http.Client{}, Clock: clock})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = ob.Close(ctx) })
		return ob
	}
	ob := open(k1)
	const credential = "Bearer header-credential-42"
	ep, err := ob.CreateEndpoint(ctx, outbox.EndpointSpec{Account: "a", URL: rc.srv.URL + "/hook", Overrides: outbox.Overrides{AllowHTTP: ptr(true)},
		Headers: map[string]string{"Authorization": credential}})
	if err != nil {
		t.Fatal(err)
	}
	secret := ep.Secrets[0].Key
	stored := func() []outboxdriver.Secret {
		t.Helper()
		raw, err := st.GetEndpoint(ctx, outboxdriver.GetEndpointParams{Account: "a", ID: ep.ID})
		if err != nil {
			t.Fatal(err)
		}
		if h := raw.Headers["Authorization"]; !secretbox.Sealed(h) || strings.Contains(h, "credential") {
			t.Fatalf("stored header %q: want it sealed", h)
		}
		return raw.Secrets
	}
	if s := stored(); len(s) != 1 || !secretbox.Sealed(s[0].Key) || strings.Contains(s[0].Key, secret) {
		t.Fatalf("stored keys %+v: want the secret sealed", s)
	}
	if got, err := ob.GetEndpoint(ctx, "a", ep.ID); err != nil || got.Secrets[0].Key != secret {
		t.Fatalf("the outbox reads %+v, %v; want the secret", got.Secrets, err)
	}
	verified := func(ob *outbox.Outbox, when string) {
		t.Helper()
		before := len(rc.requests())
		d, _ := sendOne(t, ob, "a")
		reqs := rc.requests()
		if len(reqs) != before+1 {
			t.Fatalf("%s: %d requests (delivery %+v)", when, len(reqs)-before, d)
		}
		if got := reqs[len(reqs)-1].header.Get("Authorization"); got != credential {
			t.Fatalf("%s: the endpoint's header arrived as %q", when, got)
		}
		vf, _ := webhooksig.NewVerifier(secret)
		vf.Clock = clock
		if err := vf.Verify(reqs[len(reqs)-1].header, reqs[len(reqs)-1].body); err != nil {
			t.Fatalf("%s: the delivery does not verify with the endpoint's secret: %v", when, err)
		}
	}
	verified(ob, "sealed under the first key")
	before := stored()[0].Key
	rotated := open(k2 + "," + k1)
	if n, err := rotated.ResealSecrets(ctx, []string{"a"}); err != nil || n != 1 {
		t.Fatalf("ResealSecrets: %d, %v", n, err)
	}
	if after := stored()[0].Key; after == before || !secretbox.Sealed(after) {
		t.Fatalf("the key was not sealed again: %q", after)
	}
	verified(open(k2), "after rotation, the old key dropped")
	if err := rotated.RemoveEndpoint(ctx, "a", ep.ID, outbox.Actor{ID: "test"}); err != nil {
		t.Fatal(err)
	}
	var keys, headers string
	if err := st.DB().QueryRow(`SELECT secrets, headers FROM outbox_endpoints WHERE id = ?`, ep.ID).Scan(&keys, &headers); err != nil ||
		keys != "null" || strings.Contains(headers, "sbx1") {
		t.Fatalf("a removed endpoint's stored keys %q and headers %q, %v; want none", keys, headers, err)
	}
}
