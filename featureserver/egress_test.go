package featureserver

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/transport"
	"github.com/switchboard-voice/switchboard/transport/webhooksig"
)

// tenantConfig is a test node's configuration with the outbox's default rules:
// public addresses only (call control keeps loopback, for the tests' apps).
func tenantConfig(t *testing.T, outboxAllow string) Config {
	t.Helper()
	cfg := testConfig(t)
	allow, err := parseEgressAllow(EnvOutboxEgressAllow, outboxAllow)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Outbox.EgressAllow = allow
	return cfg
}

// An account's endpoint or notice URL at a private, loopback, link-local or
// unique-local address, however written, is refused at create and at update with a
// 422 naming the field, the range and the rules, and changes nothing.
func TestTenantURLsArePublicOnly(t *testing.T) {
	t.Parallel()
	n := runNode(t, tenantConfig(t, ""))
	a := n.createAccount("a")
	var ep struct {
		ID  string `json:"id"`
		URL string `json:"url"`
	}
	const public = "https://hooks.example.com/in"
	if code, _, raw := n.do("POST", "/api/v1/webhooks", a.APIToken, map[string]any{"url": public}, &ep); code != http.StatusCreated {
		t.Fatalf("a public endpoint: %d %s", code, raw)
	}
	refused := map[string]string{
		"http://10.0.0.1:8080/admin":        "private (RFC 1918)",
		"http://172.16.5.4/":                "private (RFC 1918)",
		"http://192.168.1.1/":               "private (RFC 1918)",
		"http://[fd00::1]/":                 "unique local (fc00::/7)",
		"http://[fc00::5]:9000/x":           "unique local (fc00::/7)",
		"http://127.0.0.1/":                 "loopback",
		"http://127.3.4.5:81/":              "loopback",
		"http://[::1]/":                     "loopback",
		"http://169.254.169.254/latest":     "cloud metadata address",
		"http://169.254.1.1/":               "link-local",
		"http://[::ffff:10.0.0.1]/":         "private (RFC 1918)",
		"http://[::ffff:127.0.0.1]/":        "loopback",
		"http://[::ffff:a9fe:a9fe]/":        "cloud metadata address",
		"http://2130706433/":                "ambiguous numeric host", // decimal 127.0.0.1
		"http://0177.0.0.1/":                "ambiguous numeric host", // octal
		"http://0x7f.1/":                    "ambiguous numeric host", // hex
		"http://167772161/":                 "ambiguous numeric host", // decimal 10.0.0.1
		"http://user@10.0.0.1/":             "user-info",
		"https://public.example@127.0.0.1/": "user-info",
	}
	for raw, rule := range refused {
		for _, op := range []struct{ method, path, field string }{
			{"POST", "/api/v1/webhooks", "body.url"},
			{"PATCH", "/api/v1/webhooks/" + ep.ID, "body.url"},
			{"PUT", "/v1/Accounts/" + a.AccountSid + "/Notifications", "body.webhook_url"},
		} {
			body := map[string]any{"url": raw}
			if op.field == "body.webhook_url" {
				body = map[string]any{"webhook_url": raw, "emails": []string{}}
			}
			code, _, answer := n.do(op.method, op.path, a.APIToken, body, nil)
			s := string(answer)
			if code != http.StatusUnprocessableEntity || !strings.Contains(s, op.field) || !strings.Contains(s, rule) ||
				!strings.Contains(s, "public-only rules of webhook endpoints") {
				t.Errorf("%s %s %s: %d %s; want 422 naming %s, %q and the rules", op.method, op.path, raw, code, s, op.field, rule)
			}
			if strings.Contains(raw, "@") && strings.Contains(s, "user@") {
				t.Errorf("%s %s: the answer echoes the user-info: %s", op.method, raw, s)
			}
		}
	}
	var got struct {
		URL string `json:"url"`
	}
	if code, _, _ := n.do("GET", "/api/v1/webhooks/"+ep.ID, a.APIToken, nil, &got); code != http.StatusOK || got.URL != public {
		t.Fatalf("the endpoint after refused updates: %d %+v", code, got)
	}
	var notices struct {
		WebhookURL string `json:"webhook_url"`
	}
	if code, _, _ := n.do("GET", "/v1/Accounts/"+a.AccountSid+"/Notifications", a.APIToken, nil, &notices); code != http.StatusOK || notices.WebhookURL != "" {
		t.Fatalf("notice settings after refusals: %d %+v", code, notices)
	}
	var list struct {
		Data []json.RawMessage `json:"data"`
	}
	if n.do("GET", "/api/v1/webhooks", a.APIToken, nil, &list); len(list.Data) != 1 {
		t.Fatalf("%d endpoints after refused creates, want 1", len(list.Data))
	}
}

// countingListener is a TCP listener on ip that serves 204 and counts the
// connections it accepted.
type countingListener struct {
	accepted atomic.Int32
	port     string
	srv      *http.Server
}

func listenCounting(t *testing.T, ip string) *countingListener {
	t.Helper()
	ln, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Skipf("cannot listen on %s: %v", ip, err)
	}
	c := &countingListener{}
	_, c.port, _ = net.SplitHostPort(ln.Addr().String())
	c.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, `{"internal":"secret-config"}`)
	}), ConnState: func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			c.accepted.Add(1)
		}
	}}
	go func() { _ = c.srv.Serve(ln) }()
	t.Cleanup(func() { _ = c.srv.Close() })
	return c
}

// fixedResolver resolves the names it knows to their address, now or after a
// change (what a tenant's DNS does between the check at create and the dial).
type fixedResolver struct {
	mu    sync.Mutex
	names map[string]netip.Addr
}

func (r *fixedResolver) set(name, ip string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.names[name] = netip.MustParseAddr(ip)
}

func (r *fixedResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if ip, ok := r.names[host]; ok {
		return []netip.Addr{ip}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

var _ transport.Resolver = (*fixedResolver)(nil)

// deliveryAttempt publishes an event to the endpoint and returns its first attempt
// as the account reads it.
func deliveryAttempt(t *testing.T, n *testNode, acct testAccount, endpointID string, seen *attemptsSeen) (class, errText, response string) {
	t.Helper()
	var pub struct {
		Deliveries []struct {
			ID string `json:"id"`
		} `json:"deliveries"`
	}
	if code, _, raw := n.do("POST", "/api/v1/events", acct.APIToken, map[string]any{"type": "invoice.paid", "data": map[string]any{"n": 1},
		"endpointId": endpointID}, &pub); code != http.StatusCreated || len(pub.Deliveries) != 1 {
		t.Fatalf("publish: %d %s", code, raw)
	}
	id := pub.Deliveries[0].ID
	seen.wait(t, id)
	var d struct {
		Attempts []struct {
			Outcome  string `json:"outcome"`
			Error    string `json:"error"`
			Response string `json:"response"`
		} `json:"attempts"`
	}
	if code, _, raw := n.do("GET", "/api/v1/webhooks/"+endpointID+"/deliveries/"+id, acct.APIToken, nil, &d); code != http.StatusOK || len(d.Attempts) == 0 {
		t.Fatalf("delivery: %d %s", code, raw)
	}
	a := d.Attempts[0]
	return a.Outcome, a.Error, a.Response
}

// A host name an endpoint or notice URL names that resolves to a refused address
// at the dial is refused there with no connection made; the outbox's allow-list
// lets exactly the range it names through; the status hooks the node manages keep
// the call-control rules (loopback allowed by SWITCHBOARD_EGRESS_ALLOW in tests).
func TestTenantHostNamesAreCheckedAtTheDial(t *testing.T) {
	t.Parallel()
	one, two := listenCounting(t, "127.0.0.1"), listenCounting(t, "127.0.0.2")
	for _, c := range []struct {
		name  string
		allow string
	}{{"default", ""}, {"allowed 127.0.0.1", "127.0.0.1/32"}} {
		t.Run(c.name, func(t *testing.T) {
			res := &fixedResolver{names: map[string]netip.Addr{}}
			res.set("one.tenant.test", "93.184.216.34") // public when the endpoint is made
			res.set("two.tenant.test", "127.0.0.2")
			seen := newAttemptsSeen()
			n := runNodeWith(t, tenantConfig(t, c.allow), testLogger(), nodeHooks{observe: seen.observe, resolver: res})
			a := n.createAccount("a")
			endpoint := func(host, port string) string {
				var ep struct {
					ID string `json:"id"`
				}
				if code, _, raw := n.do("POST", "/api/v1/webhooks", a.APIToken, map[string]any{"url": "http://" + host + ":" + port + "/hook",
					"policy": map[string]any{"allowHttp": true}}, &ep); code != http.StatusCreated {
					t.Fatalf("endpoint at %s: %d %s", host, code, raw)
				}
				return ep.ID
			}
			epOne, epTwo := endpoint("one.tenant.test", one.port), endpoint("two.tenant.test", two.port)
			res.set("one.tenant.test", "127.0.0.1") // the tenant's DNS now points inside
			beforeOne, beforeTwo := one.accepted.Load(), two.accepted.Load()
			class, errText, response := deliveryAttempt(t, n, a, epOne, seen)
			if c.allow == "" {
				if class != "egress_refused" || !strings.Contains(errText, "loopback") || !strings.Contains(errText, EnvOutboxEgressAllow) ||
					response != "" || one.accepted.Load() != beforeOne {
					t.Errorf("to a name now at 127.0.0.1: %s %q %q, %d connections; want egress_refused naming the range and %s, none made",
						class, errText, response, one.accepted.Load()-beforeOne, EnvOutboxEgressAllow)
				}
			} else if class != "success" || one.accepted.Load() == beforeOne {
				t.Errorf("to 127.0.0.1 allowed by %s: %s %q", c.allow, class, errText)
			}
			if class, errText, _ := deliveryAttempt(t, n, a, epTwo, seen); class != "egress_refused" || two.accepted.Load() != beforeTwo {
				t.Errorf("to 127.0.0.2 (allowed: %q): %s %q, %d connections; want egress_refused, none made", c.allow, class, errText, two.accepted.Load()-beforeTwo)
			}

			// The notice URL: dialed public-only too.
			res.set("ops.tenant.test", "127.0.0.2")
			if code, _, raw := n.do("PUT", "/v1/Accounts/"+a.AccountSid+"/Notifications", a.APIToken,
				map[string]any{"webhook_url": "http://ops.tenant.test:" + two.port + "/ops", "emails": []string{}}, nil); code != http.StatusOK {
				t.Fatalf("notice URL at a host name: %d %s", code, raw)
			}
			if code, _, raw := n.do("POST", "/api/v1/webhooks/"+epOne+"/pause", a.APIToken, nil, nil); code != http.StatusOK {
				t.Fatalf("pause: %d %s", code, raw)
			}
			notice := waitNoticeAttempt(t, n, a)
			if notice != "egress_refused" || two.accepted.Load() != beforeTwo {
				t.Errorf("the notice to 127.0.0.2: %s, %d connections; want egress_refused, none made", notice, two.accepted.Load()-beforeTwo)
			}

			// Call control keeps its rules: a status hook on loopback is delivered.
			var got atomic.Int32
			status := listenHandler(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				got.Add(1)
				w.WriteHeader(http.StatusNoContent)
			}))
			v := n.waitCall(a, n.startCall(a, hangupApp(t).URL, map[string]any{"url": status + "/status"}))
			for _, sd := range v.StatusDeliveries {
				seen.wait(t, sd.DeliveryID)
			}
			if len(v.StatusDeliveries) == 0 || got.Load() == 0 {
				t.Errorf("status hooks on loopback: %d deliveries, %d received", len(v.StatusDeliveries), got.Load())
			}
		})
	}
}

// waitNoticeAttempt waits for the first attempt to the account's notice endpoint
// and returns its outcome.
func waitNoticeAttempt(t *testing.T, n *testNode, a testAccount) string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		var eps struct {
			Data []struct {
				ID     string   `json:"id"`
				Events []string `json:"events"`
			} `json:"data"`
		}
		n.do("GET", "/api/v1/webhooks", a.APIToken, nil, &eps)
		for _, ep := range eps.Data {
			if len(ep.Events) == 0 || !strings.HasPrefix(ep.Events[0], "endpoint.") {
				continue
			}
			var ds struct {
				Data []struct {
					ID string `json:"id"`
				} `json:"data"`
			}
			n.do("GET", "/api/v1/webhooks/"+ep.ID+"/deliveries", a.APIToken, nil, &ds)
			for _, d := range ds.Data {
				var full struct {
					Attempts []struct {
						Outcome string `json:"outcome"`
					} `json:"attempts"`
				}
				n.do("GET", "/api/v1/webhooks/"+ep.ID+"/deliveries/"+d.ID, a.APIToken, nil, &full)
				if len(full.Attempts) > 0 {
					return full.Attempts[0].Outcome
				}
			}
		}
		time.Sleep(20 * time.Millisecond) // across the outbox's own goroutines: a deadline poll
	}
	t.Fatal("no attempt to the notice endpoint")
	return ""
}

// listenHandler serves h on loopback and returns its base URL.
func listenHandler(t *testing.T, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return "http://" + ln.Addr().String()
}

// A call.status event an account publishes to its own endpoint goes out in the
// outbox's envelope, with no Jambonz-Signature: the status hook shape belongs to
// the node's status hook endpoints, not to the event type.
func TestAccountsCallStatusEventIsAnOrdinaryEvent(t *testing.T) {
	t.Parallel()
	seen := newAttemptsSeen()
	n := runNodeWith(t, testConfig(t), testLogger(), nodeHooks{observe: seen.observe})
	a := n.createAccount("a")
	var (
		mu     sync.Mutex
		header http.Header
		body   []byte
	)
	recv := listenHandler(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		header, body = r.Header.Clone(), b
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	var ep struct {
		ID     string `json:"id"`
		Secret string `json:"secret"`
	}
	if code, _, raw := n.do("POST", "/api/v1/webhooks", a.APIToken, map[string]any{"url": recv + "/mine", "events": []string{"call.status"},
		"policy": map[string]any{"allowHttp": true}}, &ep); code != http.StatusCreated {
		t.Fatalf("endpoint: %d %s", code, raw)
	}
	var pub struct {
		Deliveries []struct {
			ID string `json:"id"`
		} `json:"deliveries"`
	}
	if code, _, raw := n.do("POST", "/api/v1/events", a.APIToken, map[string]any{"type": "call.status", "data": map[string]any{"call_sid": "x", "call_status": "completed"}},
		&pub); code != http.StatusCreated || len(pub.Deliveries) != 1 {
		t.Fatalf("publish: %d %s", code, raw)
	}
	seen.wait(t, pub.Deliveries[0].ID)
	mu.Lock()
	defer mu.Unlock()
	var env struct {
		ID   string          `json:"id"`
		Type string          `json:"type"`
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(body, &env); err != nil || env.Type != "call.status" || env.ID == "" || !strings.Contains(string(env.Data), `"call_sid":"x"`) {
		t.Errorf("body %s: want the outbox envelope", body)
	}
	if h := header.Get(webhooksig.JambonzSignatureHeader); h != "" {
		t.Errorf("the account's own endpoint got a Jambonz-Signature: %q", h)
	}
	vf, _ := webhooksig.NewVerifier(ep.Secret)
	if err := vf.Verify(header, body); err != nil {
		t.Errorf("the endpoint's own signature: %v", err)
	}
}

// The node's server bounds reading a request and writing its answer: a client that
// never reads its answer holds no connection for ever; the API's answers say
// nosniff.
func TestServerBoundsSlowClients(t *testing.T) {
	t.Parallel()
	n := startNode(t, nil)
	s := n.node.server
	if s.ReadHeaderTimeout <= 0 || s.ReadTimeout <= 0 || s.WriteTimeout < 30*time.Second || s.IdleTimeout <= 0 {
		t.Errorf("server timeouts: header %v, read %v, write %v, idle %v; want all bounded (write at least 30 s)",
			s.ReadHeaderTimeout, s.ReadTimeout, s.WriteTimeout, s.IdleTimeout)
	}
	for _, path := range []string{"/v1/Me", "/api/v1/webhooks", "/readyz", "/console/signin"} {
		if _, h, _ := n.do("GET", path, "", nil, nil); h.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET %s: no X-Content-Type-Options: nosniff", path)
		}
	}
}
