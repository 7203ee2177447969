package nodeapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore"
	"github.com/switchboard-voice/switchboard/featureserver/internal/statushooks"
	"github.com/switchboard-voice/switchboard/internal/testkit"
)

// httpApp is a loopback jambonz HTTP application answering the call hook with verbs.
func httpApp(t *testing.T, verbs string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/status" {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		fmt.Fprint(w, verbs)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestAccountsRequireAdmin(t *testing.T) {
	t.Parallel()
	n := startAPI(t, apiSetup{})
	if code, h, _ := n.do("POST", "/v1/Accounts", "", map[string]any{"name": "a"}, nil); code != http.StatusUnauthorized || h.Get("WWW-Authenticate") == "" {
		t.Errorf("no token: %d", code)
	}
	if code, _, _ := n.do("POST", "/v1/Accounts", "wrong", map[string]any{"name": "a"}, nil); code != http.StatusUnauthorized {
		t.Errorf("wrong token: %d", code)
	}
	off := startAPI(t, apiSetup{options: func(o *Options) { o.AdminToken = "" }})
	if code, _, _ := off.do("POST", "/v1/Accounts", testAdminToken, map[string]any{"name": "a"}, nil); code != http.StatusForbidden {
		t.Errorf("admin disabled: %d", code)
	}
}

func TestCallLifecycleHTTP(t *testing.T) {
	t.Parallel()
	n := startAPI(t, apiSetup{})
	app := httpApp(t, `[{"verb":"say","text":"hello"},{"verb":"hangup"}]`)
	acct := n.createAccount("acme")
	var created nodestore.Application
	code, _, raw := n.do("POST", "/v1/Accounts/"+acct.AccountSid+"/Applications", acct.APIToken, map[string]any{
		"name": "ivr", "call_hook": map[string]any{"url": app.URL + "/call#rc=1&rp=5xx,ct"},
		"call_status_hook": map[string]any{"url": app.URL + "/status"},
	}, &created)
	if code != http.StatusCreated {
		t.Fatalf("create application: %d %s", code, raw)
	}
	var call struct {
		CallSid string `json:"call_sid"`
	}
	code, _, raw = n.do("POST", "/v1/Accounts/"+acct.AccountSid+"/Calls", acct.APIToken, map[string]any{
		"application_sid": created.Sid, "from": "+15550001", "to": "+15550002", "tag": map[string]any{"k": "v"},
	}, &call)
	if code != http.StatusCreated || call.CallSid == "" {
		t.Fatalf("create call: %d %s", code, raw)
	}
	v := n.waitCall(acct, call.CallSid)
	if v.CallStatus != "completed" || v.Reason != "hangup-verb" || v.From != "+15550001" {
		t.Errorf("call ended %+v", v)
	}
	kinds := timelineKinds(v)
	for _, k := range []string{"call.start", "hook.attempt", "verb.start", "verb.end", "call.end"} {
		if !slices.Contains(kinds, k) {
			t.Errorf("timeline lacks %s: %v", k, kinds)
		}
	}
	var list []CallView
	if code, _, _ := n.do("GET", "/v1/Accounts/"+acct.AccountSid+"/Calls", acct.APIToken, nil, &list); code != http.StatusOK || len(list) != 1 || list[0].CallSid != call.CallSid {
		t.Errorf("list calls: %d %+v", code, list)
	}
	// Ending a finished call is a conflict or not-found, never a success.
	if code, _, _ := n.do("POST", "/v1/Accounts/"+acct.AccountSid+"/Calls/"+call.CallSid, acct.APIToken,
		map[string]any{"call_status": "completed"}, nil); code != http.StatusNotFound && code != http.StatusConflict {
		t.Errorf("hang up an ended call: %d", code)
	}
}

// A call naming an application_sid runs the application's call hook and status hook,
// whatever the body gives beside it, as jambonz's API assigns the application's
// over them (jambonz-api-server validateCreateCall); the call's timeline says so.
func TestCallApplicationOverridesTheBody(t *testing.T) {
	t.Parallel()
	n := startAPI(t, apiSetup{})
	app := httpApp(t, `[{"verb":"hangup"}]`)
	var bodyHooks atomic.Int32
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		bodyHooks.Add(1)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `[{"verb":"hangup"}]`)
	}))
	t.Cleanup(elsewhere.Close)
	acct := n.createAccount("acme")
	var created nodestore.Application
	if code, _, raw := n.do("POST", "/v1/Accounts/"+acct.AccountSid+"/Applications", acct.APIToken, map[string]any{
		"name": "ivr", "call_hook": map[string]any{"url": app.URL + "/call"}}, &created); code != http.StatusCreated {
		t.Fatalf("create application: %d %s", code, raw)
	}
	var call struct {
		CallSid string `json:"call_sid"`
	}
	if code, _, raw := n.do("POST", "/v1/Accounts/"+acct.AccountSid+"/Calls", acct.APIToken, map[string]any{
		"application_sid": created.Sid, "from": "a", "to": "b", "speech_synthesis_vendor": "microsoft",
		"call_hook": elsewhere.URL + "/call", "call_status_hook": elsewhere.URL + "/status"}, &call); code != http.StatusCreated {
		t.Fatalf("create call: %d %s", code, raw)
	}
	v := n.waitCall(acct, call.CallSid)
	if v.Reason != "hangup-verb" || bodyHooks.Load() != 0 {
		t.Errorf("call ended %s; the body's hooks got %d requests, want 0", v.Reason, bodyHooks.Load())
	}
	var warned bool
	for _, raw := range v.Timeline {
		var e struct{ Kind, Rule, Detail string }
		_ = json.Unmarshal(raw, &e)
		warned = warned || e.Kind == "compat" && e.Rule == "ignored-property" &&
			strings.Contains(e.Detail, "call_hook, call_status_hook, speech_synthesis_vendor given with application_sid")
	}
	if !warned {
		t.Errorf("no ignored-property warning naming the fields: %v", timelineKinds(v))
	}
}

func TestAlertsRecorded(t *testing.T) {
	t.Parallel()
	n := startAPI(t, apiSetup{})
	// The gather's action hook returns a verb that does not validate: an
	// invalid-app-payload alert (a REST call's call hook gets none in jambonz:
	// lib/tasks/rest_dial.js only logs it).
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/g" {
			fmt.Fprint(w, `[{"verb":"say","txt":"typo"}]`)
			return
		}
		fmt.Fprint(w, `[{"verb":"gather","input":["digits"],"actionHook":"/g","timeout":1}]`)
	}))
	t.Cleanup(app.Close)
	acct := n.createAccount("acme")
	var call struct {
		CallSid string `json:"call_sid"`
	}
	n.do("POST", "/v1/Accounts/"+acct.AccountSid+"/Calls", acct.APIToken, testkit.WithSpeech(map[string]any{
		"call_hook": map[string]any{"url": app.URL + "/call"}, "from": "a", "to": "b"}), &call)
	n.waitCall(acct, call.CallSid)
	var alerts []nodestore.Alert
	code, _, raw := n.do("GET", "/v1/Accounts/"+acct.AccountSid+"/Alerts?type=invalid-app-payload", acct.APIToken, nil, &alerts)
	if code != http.StatusOK || len(alerts) != 1 || alerts[0].CallSid != call.CallSid || !strings.Contains(alerts[0].Detail, "say") {
		t.Fatalf("alerts: %d %s", code, raw)
	}
	if code, _, _ := n.do("GET", "/v1/Accounts/"+acct.AccountSid+"/Alerts?type=webhook-failure", acct.APIToken, nil, &alerts); code != http.StatusOK || len(alerts) != 0 {
		t.Errorf("type filter: %d %v", code, alerts)
	}
	if code, _, _ := n.do("GET", "/v1/Accounts/"+acct.AccountSid+"/Alerts?since=2999-01-01T00:00:00Z", acct.APIToken, nil, &alerts); code != http.StatusOK || len(alerts) != 0 {
		t.Errorf("since filter: %d %v", code, alerts)
	}
}

// Account A's token never reaches account B's resources: 404, as if they did not exist.
func TestAccountIsolation(t *testing.T) {
	t.Parallel()
	n := startAPI(t, apiSetup{})
	app := httpApp(t, `[{"verb":"hangup"}]`)
	a, b := n.createAccount("a"), n.createAccount("b")
	var appB nodestore.Application
	n.do("POST", "/v1/Accounts/"+b.AccountSid+"/Applications", b.APIToken, map[string]any{
		"name": "b-app", "call_hook": map[string]any{"url": app.URL}}, &appB)
	var callB struct {
		CallSid string `json:"call_sid"`
	}
	n.do("POST", "/v1/Accounts/"+b.AccountSid+"/Calls", b.APIToken, map[string]any{
		"application_sid": appB.Sid, "from": "x", "to": "y"}, &callB)
	n.waitCall(b, callB.CallSid)

	for _, path := range []string{
		"/v1/Accounts/" + b.AccountSid + "/Calls/" + callB.CallSid,
		"/v1/Accounts/" + b.AccountSid + "/Calls",
		"/v1/Accounts/" + b.AccountSid + "/Alerts",
		"/v1/Accounts/" + b.AccountSid + "/Applications",
		"/v1/Accounts/" + b.AccountSid + "/Applications/" + appB.Sid,
		// A's own path with B's ids.
		"/v1/Accounts/" + a.AccountSid + "/Calls/" + callB.CallSid,
		"/v1/Accounts/" + a.AccountSid + "/Applications/" + appB.Sid,
	} {
		if code, _, raw := n.do("GET", path, a.APIToken, nil, nil); code != http.StatusNotFound {
			t.Errorf("GET %s with A's token: %d %s", path, code, raw)
		}
	}
	if code, _, _ := n.do("POST", "/v1/Accounts/"+a.AccountSid+"/Calls", a.APIToken, map[string]any{
		"application_sid": appB.Sid, "from": "x", "to": "y"}, nil); code != http.StatusBadRequest {
		t.Errorf("A starting a call on B's application: %d, want jambonz's 400 application_sid not found", code)
	}
	if code, _, _ := n.do("POST", "/v1/Accounts/"+a.AccountSid+"/Calls/"+callB.CallSid, a.APIToken,
		map[string]any{"call_status": "completed"}, nil); code != http.StatusNotFound {
		t.Errorf("A hanging up B's call: %d", code)
	}
	if code, _, _ := n.do("DELETE", "/v1/Accounts/"+a.AccountSid+"/Applications/"+appB.Sid, a.APIToken, nil, nil); code != http.StatusNotFound {
		t.Errorf("A deleting B's application: %d", code)
	}
	var apps []nodestore.Application
	n.do("GET", "/v1/Accounts/"+b.AccountSid+"/Applications", b.APIToken, nil, &apps)
	if len(apps) != 1 {
		t.Errorf("B's application was touched: %v", apps)
	}
}

// Bad input gets a 4xx problem document and changes nothing.
func TestAPIBadInput(t *testing.T) {
	t.Parallel()
	n := startAPI(t, apiSetup{})
	acct := n.createAccount("acme")
	apps := "/v1/Accounts/" + acct.AccountSid + "/Applications"
	calls := "/v1/Accounts/" + acct.AccountSid + "/Calls"
	huge := `{"name":"x","call_hook":{"url":"http://127.0.0.1/` + strings.Repeat("a", 300<<10) + `"}}`
	hugeCall := `{"from":"a","to":{"type":"phone","number":"1"},"call_hook":"http://127.0.0.1/` + strings.Repeat("a", 300<<10) + `"}`
	// speech are the settings jambonz's API requires beside an inline call_hook.
	speech := `"speech_synthesis_vendor":"google","speech_synthesis_language":"en-US","speech_synthesis_voice":"v",` +
		`"speech_recognizer_vendor":"google","speech_recognizer_language":"en-US"`
	tests := []struct {
		name, method, path string
		body               any
		status             int
		field              string // a location the problem names, when set
	}{
		{"to of unknown type", "POST", calls, `{"from":"a","to":{"type":"pigeon","number":"1"},"call_hook":"http://h/"}`, 422, "body.to.type"},
		{"to without its number", "POST", calls, `{"from":"a","to":{"type":"phone"},"call_hook":"http://h/"}`, 422, "body.to.number"},
		{"sip to without its uri", "POST", calls, `{"from":"a","to":{"type":"sip","number":"1"},"call_hook":"http://h/"}`, 422, "body.to.sipUri"},
		{"to with an unknown field", "POST", calls, `{"from":"a","to":{"type":"phone","number":"1","colour":"x"},"call_hook":"http://h/"}`, 422, "body.to.colour"},
		{"to of a wrong type", "POST", calls, `{"from":"a","to":5,"call_hook":"http://h/"}`, 422, "body.to"},
		{"call_hook of a wrong type", "POST", calls, `{"from":"a","to":"b","call_hook":5}`, 422, "body.call_hook"},
		{"call_hook url of a wrong type", "POST", calls, `{"from":"a","to":"b","call_hook":{"url":5}}`, 422, "body.call_hook.url"},
		{"call with an unknown field", "POST", calls, `{"from":"a","to":"b","call_hook":"http://h/","colour":1}`, 422, "body.colour"},
		{"call timeout of a wrong type", "POST", calls, `{"from":"a","to":"b","call_hook":"http://h/","timeout":"soon"}`, 422, "body.timeout"},
		{"huge call", "POST", calls, hugeCall, 413, ""},
		// jambonz accepts a whisper and conference control (the call decides): only
		// the unknown call is refused.
		{"whisper of an unknown call", "PUT", calls + "/nope", `{"whisper":{"verb":"say","text":"x"}}`, 404, ""},
		{"conference control of an unknown call", "PUT", calls + "/nope", `{"conf_mute_status":"mute"}`, 404, ""},
		{"sip_request refused", "PUT", calls + "/nope", `{"sip_request":{"method":"INFO"}}`, 422, "body.sip_request"},
		{"status hook without a redirect", "PUT", calls + "/nope", `{"call_status_hook":"/s"}`, 422, "body.call_status_hook"},
		{"update with an unknown field", "PUT", calls + "/nope", `{"call_status":"completed","colour":1}`, 422, "body.colour"},
		{"bad cursor", "GET", calls + "?cursor=zzz", nil, 422, "query.cursor"},
		{"bad direction", "GET", calls + "?direction=sideways", nil, 422, "query.direction"},
		{"bad list status", "GET", calls + "?status=dancing", nil, 422, "query.status"},
		{"application of another account", "POST", apps, `{"name":"x","call_hook":"http://h/","account_sid":"other"}`, 422, "body.account_sid"},
		{"application update with an unknown field", "PUT", apps + "/nope", `{"name":"x","call_hook":"http://h/","colour":1}`, 422, "body.colour"},
		{"unknown field", "POST", apps, `{"name":"x","call_hook":{"url":"http://127.0.0.1/"},"colour":"blue"}`, 422, ""},
		{"unknown field beside a password", "POST", apps, `{"name":"x","call_hook":{"url":"http://127.0.0.1/","username":"u","password":"hunter2-secret"},"colour":"blue"}`, 422, ""},
		{"password too long", "POST", apps, `{"name":"x","call_hook":{"url":"http://127.0.0.1/","username":"u","password":"hunter2-secret` + strings.Repeat("x", 300) + `"}}`, 422, ""},
		{"unknown nested field", "POST", apps, `{"name":"x","call_hook":{"url":"http://127.0.0.1/","verb":"say"}}`, 422, ""},
		{"wrong type", "POST", apps, `{"name":5,"call_hook":{"url":"http://127.0.0.1/"}}`, 422, ""},
		{"missing field", "POST", apps, `{"call_hook":{"url":"http://127.0.0.1/"}}`, 422, ""},
		{"missing hook", "POST", apps, `{"name":"x"}`, 422, ""},
		{"bad URL", "POST", apps, `{"name":"x","call_hook":{"url":"ftp://h/"}}`, 422, ""},
		{"bad method", "POST", apps, `{"name":"x","call_hook":{"url":"http://h/","method":"PUT"}}`, 422, ""},
		{"username without password", "POST", apps, `{"name":"x","call_hook":{"url":"http://h/","username":"u"}}`, 422, ""},
		{"port out of range", "POST", apps, `{"name":"x","call_hook":{"url":"http://h:99999/"}}`, 422, ""},
		// Issue 13: credentials belong in username/password, never in a URL; the
		// refusal does not echo them (checked below for "hunter2").
		{"user-info in call hook", "POST", apps, `{"name":"x","call_hook":{"url":"https://alice:hunter2@app.example.com/call#rc=1"}}`, 422, ""},
		{"user-info in status hook", "POST", apps, `{"name":"x","call_hook":{"url":"https://h/"},"call_status_hook":{"url":"https://alice:hunter2@h/status"}}`, 422, ""},
		{"user-info in ws call hook", "POST", apps, `{"name":"x","call_hook":{"url":"wss://hunter2@h/ws"}}`, 422, ""},
		{"user-info in a call's call hook", "POST", calls, `{"from":"a","to":"b","call_hook":{"url":"http://u:hunter2@h/"},` + speech + `}`, 422, ""},
		{"user-info in a redirect", "POST", calls + "/nope", `{"call_hook":{"url":"http://u:hunter2@h/"}}`, 422, ""},
		{"user-info in the notice webhook", "PUT", "/v1/Accounts/" + acct.AccountSid + "/Notifications", `{"webhook_url":"https://u:hunter2@h/n","emails":[]}`, 422, ""},
		{"malformed JSON", "POST", apps, `{"name":`, 400, ""},
		{"not an object", "POST", apps, `[1,2]`, 422, ""},
		{"huge body", "POST", apps, huge, 413, ""},
		// jambonz-api-server validateCreateCall: 400 without an application_sid and
		// the five speech settings, or a call_hook beside them; an unknown
		// application_sid is a 400 too, with or without a call_hook.
		{"call without app", "POST", calls, `{"from":"a","to":"b"}`, 400, ""},
		{"call with speech but no hook", "POST", calls, `{"from":"a","to":"b",` + speech + `}`, 400, ""},
		{"call hook without speech", "POST", calls, `{"from":"a","to":"b","call_hook":{"url":"http://h/"}}`, 400, ""},
		{"call hook with some speech", "POST", calls, `{"from":"a","to":"b","call_hook":{"url":"http://h/"},"speech_synthesis_vendor":"google"}`, 400, ""},
		{"call with both", "POST", calls, `{"from":"a","to":"b","application_sid":"x","call_hook":{"url":"http://h/"}}`, 400, ""},
		{"call missing from", "POST", calls, `{"to":"b","call_hook":{"url":"http://h/"}}`, 422, ""},
		{"call unknown app", "POST", calls, `{"from":"a","to":"b","application_sid":"nope"}`, 400, ""},
		{"call bad scenario", "POST", calls, `{"from":"a","to":"b","call_hook":{"url":"http://h/"},"scenario":{"bogus":1},` + speech + `}`, 422, ""},
		{"call tag not object", "POST", calls, `{"from":"a","to":"b","call_hook":{"url":"http://h/"},"tag":"x"}`, 422, ""},
		{"update nothing", "POST", calls + "/nope", `{}`, 422, ""},
		{"update two things", "POST", calls + "/nope", `{"call_status":"completed","mute_status":"mute"}`, 422, ""},
		{"update bad status", "POST", calls + "/nope", `{"call_status":"ringing"}`, 422, ""},
		{"unknown query", "GET", calls + "?colour=blue", nil, 422, ""},
		{"bad since", "GET", "/v1/Accounts/" + acct.AccountSid + "/Alerts?since=yesterday", nil, 422, ""},
		{"bad alert type", "GET", "/v1/Accounts/" + acct.AccountSid + "/Alerts?type=other", nil, 422, ""},
		{"bad limit", "GET", calls + "?limit=0", nil, 422, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, h, raw := n.do(tt.method, tt.path, acct.APIToken, tt.body, nil)
			if code != tt.status {
				t.Errorf("status %d, want %d: %.300s", code, tt.status, raw)
			}
			if ct := h.Get("Content-Type"); !strings.HasPrefix(ct, "application/problem+json") {
				t.Errorf("content type %q, want a problem document", ct)
			}
			var problem struct {
				Title  string `json:"title"`
				Status int    `json:"status"`
				Detail string `json:"detail"`
				Errors []struct {
					Location string `json:"location"`
				} `json:"errors"`
			}
			if err := json.Unmarshal(raw, &problem); err != nil || problem.Status != code || problem.Title == "" {
				t.Errorf("not an RFC 9457 document: %.300s", raw)
			}
			if tt.field != "" {
				var locations []string
				for _, e := range problem.Errors {
					locations = append(locations, e.Location)
				}
				if !slices.Contains(locations, tt.field) {
					t.Errorf("the problem names %v, want %s: %.300s", locations, tt.field, raw)
				}
			}
			if strings.Contains(string(raw), "hunter2") {
				t.Errorf("the problem document echoes a password: %.300s", raw)
			}
			if strings.HasPrefix(tt.name, "user-info") && !strings.Contains(string(raw), "user-info") {
				t.Errorf("the refusal does not say why: %.300s", raw)
			}
		})
	}
	var list []nodestore.Application
	n.do("GET", apps, acct.APIToken, nil, &list)
	var callList []CallView
	n.do("GET", calls, acct.APIToken, nil, &callList)
	if len(list) != 0 || len(callList) != 0 {
		t.Errorf("bad input changed state: %d applications, %d calls", len(list), len(callList))
	}
}

// Anonymous callers get 401 before any validation; unknown routes and methods get
// problem documents too.
func TestAuthenticationBeforeValidation(t *testing.T) {
	t.Parallel()
	n := startAPI(t, apiSetup{})
	acct := n.createAccount("acme")
	for _, tt := range []struct {
		name, method, path, token string
		body                      any
		status                    int
	}{
		{"anonymous, bad body", "POST", "/v1/Accounts/" + acct.AccountSid + "/Calls", "", `{"nonsense":1}`, 401},
		{"bad token, bad body", "POST", "/v1/Accounts/" + acct.AccountSid + "/Applications", "nope", `{}`, 401},
		{"anonymous admin, bad body", "POST", "/v1/Accounts", "", `{}`, 401},
		{"foreign token, bad query", "GET", "/v1/Accounts/someone-else/Alerts?since=garbage", acct.APIToken, nil, 404},
		{"unknown route", "GET", "/v1/nope", acct.APIToken, nil, 404},
		{"wrong method", "PUT", "/v1/Accounts/" + acct.AccountSid + "/Calls", acct.APIToken, nil, 405},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, h, raw := n.do(tt.method, tt.path, tt.token, tt.body, nil)
			if code != tt.status || !strings.HasPrefix(h.Get("Content-Type"), "application/problem+json") {
				t.Errorf("%d %s %s, want %d problem", code, h.Get("Content-Type"), raw, tt.status)
			}
		})
	}
}

// GET /v1/Accounts/{account} gives the account's own token holder its webhook
// secrets (a bootstrap account's generated one included), and nothing to anyone else.
func TestGetAccountShowsItsSecrets(t *testing.T) {
	t.Parallel()
	n := startAPI(t, apiSetup{})
	acct := n.createAccount("acme")
	other := n.createAccount("other")
	var got struct {
		AccountSid          string `json:"account_sid"`
		Name                string `json:"name"`
		WebhookSecret       string `json:"webhook_secret"`
		StatusWebhookSecret string `json:"status_webhook_secret"`
		APIToken            string `json:"api_token"`
	}
	path := "/v1/Accounts/" + acct.AccountSid
	if code, _, raw := n.do("GET", path, acct.APIToken, nil, &got); code != http.StatusOK {
		t.Fatalf("get account: %d %s", code, raw)
	}
	if got.AccountSid != acct.AccountSid || got.Name != "acme" || got.WebhookSecret != acct.WebhookSecret ||
		got.StatusWebhookSecret != statushooks.SigningSecret(acct.WebhookSecret) || got.APIToken != "" {
		t.Fatalf("account %+v", got)
	}
	for _, token := range []string{other.APIToken, "", testAdminToken} {
		if code, _, raw := n.do("GET", path, token, nil, nil); code == http.StatusOK || strings.Contains(string(raw), acct.WebhookSecret) {
			t.Fatalf("token %.6s… read the account: %d %s", token, code, raw)
		}
	}
}

// TestApplicationPartialUpdate: PUT of an application replaces the fields given and
// keeps the others, as jambonz does; a bad field is refused, naming it, and changes
// nothing; jambonz's media fields, and its 0/1 flags, are accepted and ignored.
func TestApplicationPartialUpdate(t *testing.T) {
	t.Parallel()
	n := startAPI(t, apiSetup{})
	acct := n.createAccount("acme")
	apps := "/v1/Accounts/" + acct.AccountSid + "/Applications"
	var created nodestore.Application
	if code, _, raw := n.do("POST", apps, acct.APIToken, map[string]any{
		"name": "ivr", "call_hook": map[string]any{"url": "http://127.0.0.1/call", "username": "u", "password": "hunter2"},
		"call_status_hook":       "http://127.0.0.1/status",
		"speech_synthesis_label": "l", "speech_recognizer_label": "l",
		"fallback_speech_synthesis_vendor": "google", "fallback_speech_synthesis_language": "en-US",
		"fallback_speech_synthesis_voice": "v", "fallback_speech_synthesis_label": "l",
		"fallback_speech_recognizer_vendor": "google", "fallback_speech_recognizer_language": "en-US",
		"fallback_speech_recognizer_label": "l", "use_for_fallback_speech": 0,
		"app_json": `[{"verb":"say","text":"hi"}]`, "env_vars": map[string]any{"k": "v"}, "record_all_calls": 1,
	}, &created); code != http.StatusCreated {
		t.Fatalf("create with jambonz's media fields: %d %s", code, raw)
	}
	app := apps + "/" + created.Sid
	stored := func() nodestore.Application {
		t.Helper()
		var a nodestore.Application
		if code, _, raw := n.do("GET", app, acct.APIToken, nil, &a); code != http.StatusOK {
			t.Fatalf("read: %d %s", code, raw)
		}
		return a
	}
	before := stored()

	if code, _, raw := n.do("PUT", app, acct.APIToken, map[string]any{"name": "renamed"}, nil); code != http.StatusNoContent {
		t.Fatalf("rename alone: %d %s", code, raw)
	}
	want := before
	want.Name = "renamed"
	if got := stored(); !reflect.DeepEqual(got, want) {
		t.Errorf("after renaming: %+v, want %+v", got, want)
	}
	if before.CallHook.Password != "********" {
		t.Errorf("the call_hook's password is not kept (hidden): %+v", before.CallHook)
	}

	if code, _, raw := n.do("PUT", app, acct.APIToken, map[string]any{"call_status_hook": "http://127.0.0.1/moved", "record_all_calls": true}, nil); code != http.StatusNoContent {
		t.Fatalf("move the status hook: %d %s", code, raw)
	}
	want.CallStatusHook = &nodestore.HookSpec{URL: "http://127.0.0.1/moved"}
	if got := stored(); !reflect.DeepEqual(got, want) {
		t.Errorf("after moving the status hook: %+v, want %+v", got, want)
	}

	// jambonz takes a ws(s) status hook, and an application's speech settings and
	// env_vars, which its calls' hooks carry.
	if code, _, raw := n.do("PUT", app, acct.APIToken, map[string]any{"call_status_hook": "ws://127.0.0.1/status",
		"speech_synthesis_vendor": "elevenlabs", "env_vars": map[string]any{"GREETING": "hi"}}, nil); code != http.StatusNoContent {
		t.Fatalf("ws status hook and settings: %d %s", code, raw)
	}
	want.CallStatusHook = &nodestore.HookSpec{URL: "ws://127.0.0.1/status"}
	want.SpeechSynthesisVendor, want.EnvVars = "elevenlabs", map[string]any{"GREETING": "hi"}
	if got := stored(); !reflect.DeepEqual(got, want) {
		t.Errorf("after the ws status hook and settings: %+v, want %+v", got, want)
	}

	for _, bad := range []struct {
		body  string
		field string
	}{
		{`{"name":""}`, "body.name"},
		{`{"name":"x","call_hook":"ftp://127.0.0.1/"}`, "body.call_hook"},
		{`{"name":"x","call_status_hook":"ftp://127.0.0.1/"}`, "body.call_status_hook"},
		{`{"name":"x","record_all_calls":2}`, "body.record_all_calls"},
		{`{"name":"x","colour":1}`, "body.colour"},
	} {
		code, _, raw := n.do("PUT", app, acct.APIToken, bad.body, nil)
		if code != http.StatusUnprocessableEntity || !strings.Contains(string(raw), bad.field) {
			t.Errorf("PUT %s: %d %s, want 422 naming %s", bad.body, code, raw, bad.field)
		}
		if got := stored(); !reflect.DeepEqual(got, want) {
			t.Errorf("PUT %s changed the application: %+v", bad.body, got)
		}
	}
}
