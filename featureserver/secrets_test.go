package featureserver

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/switchboard-voice/switchboard/featureserver/internal/statushooks"
	"github.com/switchboard-voice/switchboard/internal/secretbox"
	"github.com/switchboard-voice/switchboard/internal/testkit"
	"github.com/switchboard-voice/switchboard/transport/webhooksig"
)

// deliveryLog records what the receivers of a test got and whether it verified.
type deliveryLog struct {
	mu   sync.Mutex
	got  []string // a line per request: what verified, or why not
	each chan struct{}
}

func (l *deliveryLog) add(line string) {
	l.mu.Lock()
	l.got = append(l.got, line)
	l.mu.Unlock()
	l.each <- struct{}{}
}

// next waits for the next request and returns its line.
func (l *deliveryLog) next(t *testing.T) string {
	t.Helper()
	select {
	case <-l.each:
	case <-time.After(20 * time.Second):
		t.Fatal("no delivery arrived")
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.got[len(l.got)-1]
}

// With SWITCHBOARD_SECRETS_KEY no secret the node keeps appears in the database
// file's bytes; `secrets rotate` seals them under a new key, after which the old key
// can go and every delivery, to an account's endpoint and to a status hook, still
// verifies with the secrets the receivers hold; without the key the node refuses to
// start, naming the variable.
func TestSecretsAreEncryptedAtRest(t *testing.T) {
	t.Parallel()
	k1, k2 := secretbox.NewKey(), secretbox.NewKey()
	cfg := testConfig(t)
	cfg.SecretsKey = k1
	var logs testkit.SyncBuffer
	n := runNodeWith(t, cfg, zerolog.New(&logs).Level(zerolog.DebugLevel), nodeHooks{})
	acct := n.createAccount("acme")

	var (
		mu             sync.Mutex
		endpointSecret string
	)
	log := &deliveryLog{each: make(chan struct{}, 16)}
	const hookPassword, headerCredential = "status-hook-password-5c1d", "endpoint-header-credential-8e2a"
	receiver := listenHandler(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.WriteHeader(http.StatusNoContent)
		if strings.HasSuffix(r.URL.Path, "/status") {
			_, pw, _ := r.BasicAuth()
			jerr := webhooksig.VerifyJambonz(acct.WebhookSecret, r.Header.Get(webhooksig.JambonzSignatureHeader), body, time.Now(), time.Minute)
			v, _ := webhooksig.NewVerifier(statushooks.SigningSecret(acct.WebhookSecret))
			serr := v.Verify(r.Header, body)
			if pw != hookPassword || jerr != nil || serr != nil {
				log.add("status: not verified: password " + pw)
				return
			}
			log.add("status: verified")
			return
		}
		if got := r.Header.Get("X-Api-Key"); got != headerCredential {
			log.add("endpoint: header " + got)
			return
		}
		mu.Lock()
		v, err := webhooksig.NewVerifier(endpointSecret)
		mu.Unlock()
		if err == nil {
			err = v.Verify(r.Header, body)
		}
		if err != nil {
			log.add("endpoint: " + err.Error())
			return
		}
		log.add("endpoint: verified")
	}))
	var ep struct {
		ID     string `json:"id"`
		Secret string `json:"secret"`
	}
	if code, _, raw := n.do("POST", "/api/v1/webhooks", acct.APIToken, map[string]any{"url": receiver + "/in", "events": []string{"invoice.paid"},
		"policy": map[string]any{"allowHttp": true}, "headers": map[string]string{"X-Api-Key": headerCredential}}, &ep); code != http.StatusCreated {
		t.Fatalf("endpoint: %d %s", code, raw)
	}
	mu.Lock()
	endpointSecret = ep.Secret
	mu.Unlock()
	exchange := func(n *testNode, when string) {
		t.Helper()
		if code, _, raw := n.do("POST", "/api/v1/events", acct.APIToken, map[string]any{"type": "invoice.paid", "data": map[string]any{"n": 1}}, nil); code != http.StatusCreated {
			t.Fatalf("%s: publish: %d %s", when, code, raw)
		}
		if got := log.next(t); got != "endpoint: verified" {
			t.Errorf("%s: the endpoint's delivery: %s", when, got)
		}
		n.waitCall(acct, n.startCall(acct, hangupApp(t).URL, map[string]any{"url": receiver + "/status", "username": "u", "password": hookPassword}))
		// trying, ringing, in-progress and completed (docs/compatibility.md §7).
		for range 4 {
			if got := log.next(t); got != "status: verified" {
				t.Errorf("%s: the status delivery: %s", when, got)
			}
		}
	}
	exchange(n, "under the first key")
	n.stop()

	dbFile := dbPath(n)
	secrets := map[string]string{"webhook secret": acct.WebhookSecret, "status signing secret": statushooks.SigningSecret(acct.WebhookSecret),
		"endpoint secret": ep.Secret, "status hook password": hookPassword, "endpoint header": headerCredential}
	inClear := func(when string) {
		t.Helper()
		var raw []byte
		for _, name := range []string{dbFile, dbFile + "-wal", dbFile + "-shm"} {
			b, err := os.ReadFile(name)
			if err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			raw = append(raw, b...)
		}
		if len(raw) == 0 {
			t.Fatal("no database bytes")
		}
		for what, s := range secrets {
			if bytes.Contains(raw, []byte(s)) {
				t.Errorf("%s: the database file holds the %s in clear", when, what)
			}
		}
	}
	inClear("with a key")

	noKey := cfg
	noKey.SecretsKey = ""
	if _, err := NewNode(context.Background(), noKey, NodeOptions{}); !errors.Is(err, ErrBadConfig) || !strings.Contains(err.Error(), EnvSecretsKey) {
		t.Errorf("a node without the key: %v, want a refusal naming %s", err, EnvSecretsKey)
	}

	rep, err := RotateSecrets(context.Background(), cfg.DatabaseURL, k2+","+k1)
	if err != nil || rep.Keys != 2 || rep.NodeValues == 0 || rep.Endpoints < 2 {
		t.Fatalf("rotate: %+v, %v; want the node's secrets and the endpoints' keys (the account's and its status hook's) sealed again", rep, err)
	}
	rotated := cfg
	rotated.SecretsKey = k2 // the old key dropped
	again := runNodeWith(t, rotated, zerolog.New(&logs).Level(zerolog.DebugLevel), nodeHooks{})
	exchange(again, "after rotation, the old key dropped")
	// A wrong token and a refused URL with a password in it: still nothing in the log.
	again.do("GET", "/v1/Accounts/"+acct.AccountSid+"/Calls", "wrong-"+acct.APIToken, nil, nil)
	again.do("POST", "/api/v1/webhooks", acct.APIToken, map[string]any{"url": "https://user:url-password-77@hooks.example.com/"}, nil)
	again.stop()
	inClear("after rotation")
	secrets["API token"], secrets["admin token"], secrets["URL password"] = acct.APIToken, testAdminToken, "url-password-77"
	secrets["secrets key"], secrets["old secrets key"] = k2, k1
	for what, secret := range secrets {
		if strings.Contains(logs.String(), secret) {
			t.Errorf("the node's log shows the %s", what)
		}
	}
}

// --print-config says whether secrets are stored in clear, and never shows a key.
func TestPrintConfigSaysHowSecretsAreStored(t *testing.T) {
	t.Parallel()
	value := func(keys string) string {
		c, err := LoadConfig(envOf(map[string]string{EnvSecretsKey: keys}), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, kv := range c.Printable() {
			if kv[0] == EnvSecretsKey {
				return kv[1]
			}
		}
		t.Fatalf("%s is not printed", EnvSecretsKey)
		return ""
	}
	if v := value(""); !strings.Contains(v, "stored in clear") {
		t.Errorf("without a key: %q", v)
	}
	k := secretbox.NewKey()
	if v := value(k); strings.Contains(v, k) || !strings.Contains(v, "encrypted") {
		t.Errorf("with a key: %q", v)
	}
	if _, err := LoadConfig(envOf(map[string]string{EnvSecretsKey: "not-a-key"}), nil); !errors.Is(err, ErrBadConfig) ||
		!strings.Contains(err.Error(), EnvSecretsKey) || strings.Contains(err.Error(), "not-a-key") {
		t.Errorf("a bad key: %v", err)
	}
}
