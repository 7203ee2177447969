package featureserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore"
	"github.com/switchboard-voice/switchboard/featureserver/internal/statushooks"
	"github.com/switchboard-voice/switchboard/internal/jsjson"
	"github.com/switchboard-voice/switchboard/internal/testkit"
	"github.com/switchboard-voice/switchboard/transport/webhooksig"
)

// Status notifications of HTTP applications go through the outbox: a receiver that
// is down does not lose them, even across a node restart, and they arrive signed
// with the account's status webhook secret.
func TestStatusHooksThroughOutboxSurviveRestart(t *testing.T) {
	t.Parallel()
	var up atomic.Bool
	var mu sync.Mutex
	var statuses []string
	arrived := make(chan struct{}, 1) // notified after each status is recorded
	var secret atomic.Value           // the account's status_webhook_secret
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !up.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		body, _ := io.ReadAll(r.Body)
		v, err := webhooksig.NewVerifier(secret.Load().(string))
		if err == nil {
			err = v.Verify(r.Header, body)
		}
		if err != nil {
			t.Errorf("status delivery does not verify: %v", err)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		var fields struct {
			CallStatus string `json:"call_status"`
			CallSid    string `json:"call_sid"`
		}
		_ = json.Unmarshal(body, &fields)
		mu.Lock()
		statuses = append(statuses, fields.CallStatus)
		mu.Unlock()
		select {
		case arrived <- struct{}{}:
		default:
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer receiver.Close()
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `[{"verb":"say","text":"hi"},{"verb":"hangup"}]`)
	}))
	defer app.Close()

	n := startNode(t, nil)
	var acct struct {
		testAccount
		StatusWebhookSecret string `json:"status_webhook_secret"`
	}
	if code, _, raw := n.do("POST", "/v1/Accounts", testAdminToken, map[string]any{"name": "acme"}, &acct); code != http.StatusCreated {
		t.Fatalf("create account: %d %s", code, raw)
	}
	secret.Store(acct.StatusWebhookSecret)
	v := n.waitCall(acct.testAccount, n.startCall(acct.testAccount, app.URL, map[string]any{"url": receiver.URL + "/status"}))
	for _, k := range timelineKinds(v) {
		if k == "alert" {
			t.Errorf("a down status receiver must not alert the call: %v", timelineKinds(v))
		}
	}
	n.stop() // the receiver is still down: the notifications wait in the outbox

	up.Store(true)
	startNodeOn(t, n)
	deadline := time.After(30 * time.Second)
	for {
		mu.Lock()
		got := append([]string(nil), statuses...)
		mu.Unlock()
		if containsAll(got, "in-progress", "completed") {
			return
		}
		select {
		case <-arrived:
		case <-deadline:
			t.Fatalf("status notifications after restart: %v", got)
		}
	}
}

// A status hook's method and Basic credentials outlive the node: notifications still
// queued at a restart go out as the application configured the hook.
func TestStatusHookConfigurationSurvivesRestart(t *testing.T) {
	t.Parallel()
	type seen struct{ method, user, pass, status string }
	var up atomic.Bool
	got := make(chan seen, 16)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !up.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		u, pw, _ := r.BasicAuth()
		got <- seen{r.Method, u, pw, r.URL.Query().Get("call_status")}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer receiver.Close()
	app := hangupApp(t)

	n := startNode(t, nil)
	acct := n.createAccount("acme")
	n.waitCall(acct, n.startCall(acct, app.URL, map[string]any{"url": receiver.URL + "/status", "method": "GET", "username": "st", "password": "pw"}))
	n.stop() // the receiver is down: the notifications wait in the outbox

	up.Store(true)
	startNodeOn(t, n)
	select {
	case s := <-got:
		if s.method != http.MethodGet || s.user != "st" || s.pass != "pw" || s.status != "" {
			t.Fatalf("status delivery after restart: %+v, want GET with no fields in the query (as jambonz sends it) and Basic st:pw", s)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no status delivery after restart")
	}
}

func containsAll(have []string, want ...string) bool {
	for _, w := range want {
		found := false
		for _, h := range have {
			found = found || h == w
		}
		if !found {
			return false
		}
	}
	return true
}

// Status deliveries are dressed as the application configured its status hook: GET
// with nothing of the call (as jambonz sends a GET), its Basic auth, the account's Jambonz-Signature and
// the node's User-Agent, and a Standard Webhooks signature over what is sent. A hook
// whose URL has a query of its own is its own hook: it does not take the method and
// credentials of the same URL without that query.
func TestStatusHookThroughOutboxKeepsTheHookContract(t *testing.T) {
	t.Parallel()
	type seen struct {
		method, user, pass, status, tenant, ua string
		sigErr, standardErr                    error
	}
	got := make(chan seen, 16)
	n := startNode(t, nil)
	acct := n.createAccount("acme")
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, pw, _ := r.BasicAuth()
		body, _ := io.ReadAll(r.Body)
		err := webhooksig.VerifyJambonz(acct.WebhookSecret, r.Header.Get(webhooksig.JambonzSignatureHeader), body, time.Now(), time.Minute)
		standard := errors.New("no verifier")
		if v, verr := webhooksig.NewVerifier(statushooks.SigningSecret(acct.WebhookSecret)); verr == nil {
			standard = v.Verify(r.Header, body)
		}
		status := r.URL.Query().Get("call_status")
		if status == "" {
			var fields struct {
				CallStatus string `json:"call_status"`
			}
			_ = json.Unmarshal(body, &fields)
			status = fields.CallStatus
		}
		got <- seen{r.Method, u, pw, status, r.URL.Query().Get("tenant"), r.UserAgent(), err, standard}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer receiver.Close()
	app := hangupApp(t)
	n.waitCall(acct, n.startCall(acct, app.URL, map[string]any{"url": receiver.URL + "/status", "method": "POST", "username": "a", "password": "a"}))
	n.waitCall(acct, n.startCall(acct, app.URL, map[string]any{"url": receiver.URL + "/status?tenant=b", "method": "GET", "username": "st", "password": "pw"}))
	// Each call sends its statuses: the POST hook gets the fields, the GET one none
	// of them (jambonz sends no payload on a GET: lib/utils/http-requestor.js), only
	// its URL's own query.
	for sawPOST, sawGET := false, false; !sawPOST || !sawGET; {
		select {
		case s := <-got:
			want := seen{"POST", "a", "a", s.status, "", "jambonz", nil, nil}
			if s.tenant == "b" {
				want = seen{"GET", "st", "pw", "", "b", "jambonz", nil, nil}
				sawGET = true
			} else {
				sawPOST = true
			}
			if s != want || s.method == "POST" && s.status == "" {
				t.Errorf("status delivery %+v, want %+v", s, want)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("a status delivery is missing")
		}
	}
	// The outbox store's writer is exported: it wrote the notifications.
	_, _, metrics := n.do("GET", "/metrics", "", nil, nil)
	for _, name := range []string{"switchboard_outbox_store_transactions_total", "switchboard_outbox_store_writes_total",
		"switchboard_outbox_store_busy_seconds_total", "switchboard_outbox_store_commit_seconds_total"} {
		re := regexp.MustCompile(`(?m)^` + name + ` (\S+)$`)
		m := re.FindSubmatch(metrics)
		if v, err := strconv.ParseFloat(string(firstGroup(m)), 64); err != nil || v <= 0 {
			t.Errorf("metric %s: %q, want a positive value", name, firstGroup(m))
		}
	}
}

// firstGroup is a regexp match's first group, or nothing.
func firstGroup(m [][]byte) []byte {
	if len(m) < 2 {
		return nil
	}
	return m[1]
}

// A status notification the outbox gives up on raises an alert naming the call.
func TestStatusHookGivenUpIsAlerted(t *testing.T) {
	t.Parallel()
	app := hangupApp(t)
	stored := make(chan nodestore.Alert, 16)
	n := runNodeWith(t, testConfig(t), testLogger(), nodeHooks{wrapStore: func(s nodestore.Store) nodestore.Store { return alertsSeen{s, stored} }})
	acct := n.createAccount("acme")
	// Link-local (cloud metadata) is refused by the egress rules: the delivery is
	// DEAD at once under the standard profile, and nothing leaves the machine.
	callSid := n.startCall(acct, app.URL, map[string]any{"url": "http://169.254.169.254/status"})
	n.waitCall(acct, callSid)
	for {
		select {
		case a := <-stored:
			if a.Type != "webhook-connection-failure" {
				continue
			}
			var alerts []nodestore.Alert
			n.do("GET", "/v1/Accounts/"+acct.AccountSid+"/Alerts?type=webhook-connection-failure", acct.APIToken, nil, &alerts)
			if len(alerts) == 0 || alerts[0].CallSid != callSid || alerts[0].URL != "http://169.254.169.254/status" {
				t.Fatalf("alerts %+v, want the first naming call %s and the status hook", alerts, callSid)
			}
			return
		case <-time.After(20 * time.Second):
			t.Fatal("no alert about the status notification given up")
		}
	}
}

// alertsSeen is a store that tells of the alerts it stored, as many as stored holds
// (it never blocks the node).
type alertsSeen struct {
	nodestore.Store
	stored chan<- nodestore.Alert
}

func (s alertsSeen) AddAlert(ctx context.Context, a nodestore.Alert) error {
	err := s.Store.AddAlert(ctx, a)
	if err == nil {
		select {
		case s.stored <- a:
		default:
		}
	}
	return err
}

// hangupApp is an HTTP application whose every answer is a hangup.
func hangupApp(t *testing.T) *httptest.Server {
	t.Helper()
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `[{"verb":"hangup"}]`)
	}))
	t.Cleanup(app.Close)
	return app
}

// startCall starts a call of acct on the application at appURL with the given status
// hook and returns its sid.
func (n *testNode) startCall(acct testAccount, appURL string, statusHook map[string]any) string {
	n.t.Helper()
	var call struct {
		CallSid string `json:"call_sid"`
	}
	if code, _, raw := n.do("POST", "/v1/Accounts/"+acct.AccountSid+"/Calls", acct.APIToken, testkit.WithSpeech(map[string]any{
		"call_hook": map[string]any{"url": appURL}, "call_status_hook": statusHook, "from": "a", "to": "b"}), &call); code != http.StatusCreated {
		n.t.Fatalf("start call: %d %s", code, raw)
	}
	return call.CallSid
}

// docs/call-control.md §3, issue 13: a node's status notification is what JSON.stringify
// writes (& < > as they are), and its Jambonz-Signature covers exactly those bytes, so
// a verifier that re-serialises the parsed body (JSON.stringify(JSON.parse(body)),
// which jsjson.Stringify computes) gets the signed bytes.
func TestStatusNotificationBodyIsJSONStringifyOutput(t *testing.T) {
	t.Parallel()
	bodies := make(chan []byte, 4)
	n := startNode(t, nil)
	acct := n.createAccount("acme")
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if webhooksig.VerifyJambonz(acct.WebhookSecret, r.Header.Get(webhooksig.JambonzSignatureHeader), body, time.Now(), time.Minute) != nil {
			body = nil
		}
		bodies <- body
		w.WriteHeader(http.StatusNoContent)
	}))
	defer receiver.Close()
	app := hangupApp(t)
	var call struct {
		CallSid string `json:"call_sid"`
	}
	if code, _, raw := n.do("POST", "/v1/Accounts/"+acct.AccountSid+"/Calls", acct.APIToken, testkit.WithSpeech(map[string]any{
		"call_hook": map[string]any{"url": app.URL}, "call_status_hook": map[string]any{"url": receiver.URL + "/status"},
		"from": "R&D <ops>", "to": "b"}), &call); code != http.StatusCreated {
		t.Fatalf("start call: %d %s", code, raw)
	}
	n.waitCall(acct, call.CallSid)
	select {
	case body := <-bodies:
		if body == nil {
			t.Fatal("the status notification's signature does not verify")
		}
		again, err := jsjson.Stringify(body)
		if !bytes.Contains(body, []byte(`"from":"R&D <ops>"`)) || err != nil || !bytes.Equal(again, body) {
			t.Fatalf("status notification body %s is not JSON.stringify output (re-serialised: %s, %v)", body, again, err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no status delivery")
	}
}
