package featureserver

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/featureserver/internal/statushooks"
	"github.com/switchboard-voice/switchboard/internal/testkit"
	"github.com/switchboard-voice/switchboard/transport/webhooksig"
)

type adminAccount struct {
	AccountSid          string     `json:"account_sid"`
	Name                string     `json:"name"`
	WebhookSecret       string     `json:"webhook_secret"`
	StatusWebhookSecret string     `json:"status_webhook_secret"`
	PreviousSecretUntil *time.Time `json:"previous_secret_until"`
}

// After a webhook secret rotation the old secret keeps signing beside the new one
// for the grace period (both verify every hook, and the status hook endpoints
// carry both keys); with no grace only the new one signs.
func TestRotateWebhookSecret(t *testing.T) {
	t.Parallel()
	n := startNode(t, nil)
	var mu sync.Mutex
	var got []struct {
		sig  string
		body []byte
	}
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, struct {
			sig  string
			body []byte
		}{r.Header.Get(webhooksig.JambonzSignatureHeader), body})
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `[{"verb":"hangup"}]`)
	}))
	t.Cleanup(app.Close)
	a := n.createAccount("a")
	call := func() (string, []byte) {
		t.Helper()
		var c struct {
			Sid string `json:"sid"`
		}
		if code, _, raw := n.do("POST", "/v1/Accounts/"+a.AccountSid+"/Calls", a.APIToken, testkit.WithSpeech(map[string]any{"from": "x",
			"to": map[string]any{"type": "phone", "number": "y"}, "call_hook": app.URL + "/call", "call_status_hook": app.URL + "/status"}), &c); code != http.StatusCreated {
			t.Fatalf("create call: %d %s", code, raw)
		}
		n.waitCall(a, c.Sid)
		mu.Lock()
		defer mu.Unlock()
		for _, g := range got {
			// The call hook (the only request with defaults): the status
			// notifications go through the outbox, checked below.
			if strings.Contains(string(g.body), c.Sid) && strings.Contains(string(g.body), `"defaults"`) {
				return g.sig, g.body
			}
		}
		t.Fatalf("no hook of call %s", c.Sid)
		return "", nil
	}
	call() // the status hook endpoint exists, with the first secret
	old := a.WebhookSecret
	var rotated adminAccount
	if code, _, raw := n.do("POST", "/v1/Accounts/"+a.AccountSid+"/WebhookSecret", testAdminToken, map[string]any{"grace_period_seconds": 3600}, &rotated); code != http.StatusOK ||
		rotated.WebhookSecret == old || rotated.PreviousSecretUntil == nil {
		t.Fatalf("rotate: %d %s", code, raw)
	}
	sig, body := call()
	for name, secret := range map[string]string{"old": old, "new": rotated.WebhookSecret} {
		if err := webhooksig.VerifyJambonz(secret, sig, body, time.Now(), time.Minute); err != nil {
			t.Errorf("during the grace period the %s secret does not verify %q: %v", name, sig, err)
		}
	}
	eps, err := n.node.outbox.ListEndpoints(t.Context(), a.AccountSid)
	if err != nil || len(eps) != 1 || len(eps[0].Secrets) != 2 || eps[0].Secrets[0].Key != statushooks.SigningSecret(rotated.WebhookSecret) ||
		eps[0].Secrets[1].Key != statushooks.SigningSecret(old) || eps[0].Secrets[1].ExpiresAt == nil {
		t.Errorf("status hook endpoints after the rotation: %+v, %v; want the new key, then the old one expiring", eps, err)
	}

	rotated = adminAccount{}
	if code, _, raw := n.do("POST", "/v1/Accounts/"+a.AccountSid+"/WebhookSecret", testAdminToken, map[string]any{"grace_period_seconds": 0}, &rotated); code != http.StatusOK || rotated.PreviousSecretUntil != nil {
		t.Fatalf("rotate without grace: %d %s", code, raw)
	}
	sig, body = call()
	if err := webhooksig.VerifyJambonz(rotated.WebhookSecret, sig, body, time.Now(), time.Minute); err != nil {
		t.Errorf("the newest secret does not verify: %v", err)
	}
	if strings.Count(sig, "v1=") != 1 {
		t.Errorf("signature %q, want the new secret's only", sig)
	}
}
