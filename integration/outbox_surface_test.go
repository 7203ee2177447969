package integration

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/internal/pgtest"
	"github.com/switchboard-voice/switchboard/transport/webhooksig"
)

// recordingProxy is an HTTP CONNECT proxy on loopback that records the target of
// every CONNECT it is asked, and tunnels to it.
type recordingProxy struct {
	ln    net.Listener
	mu    sync.Mutex
	asked []string
	wg    sync.WaitGroup
}

func newRecordingProxy(t *testing.T) *recordingProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &recordingProxy{ln: ln}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.wg.Add(1)
			go func() { defer p.wg.Done(); p.tunnel(c) }()
		}
	}()
	t.Cleanup(func() { _ = ln.Close(); p.wg.Wait() })
	return p
}

func (p *recordingProxy) tunnel(c net.Conn) {
	defer c.Close()
	br := bufio.NewReader(c)
	req, err := http.ReadRequest(br)
	if err != nil || req.Method != http.MethodConnect {
		return
	}
	p.mu.Lock()
	p.asked = append(p.asked, req.Host)
	p.mu.Unlock()
	target, err := net.Dial("tcp", req.Host)
	if err != nil {
		_, _ = io.WriteString(c, "HTTP/1.1 502 Bad Gateway\r\n\r\n")
		return
	}
	defer target.Close()
	_, _ = io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n")
	done := make(chan struct{})
	go func() { _, _ = io.Copy(target, br); _ = target.(*net.TCPConn).CloseWrite(); close(done) }()
	_, _ = io.Copy(c, target)
	<-done
}

func (p *recordingProxy) targets() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Compact(slices.Sorted(slices.Values(p.asked)))
}

// publishWithKey publishes body with an Idempotency-Key through the node's API.
func publishWithKey(t *testing.T, p *serveProcess, a serveAccount, key string, body map[string]any) (int, map[string]any) {
	t.Helper()
	raw, _ := json.Marshal(body)
	req, err := http.NewRequest("POST", p.base+"/api/v1/events", bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+a.APIToken)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, out
}

// TestOutboxIntegrationSurface drives issue 29's integration surface through the real
// `switchboard serve` and its `switchboard webhooks` CLI, with every delivery through
// an egress proxy (SWITCHBOARD_EGRESS_PROXY) on loopback that records what it was
// asked: an ed25519 endpoint created by the CLI with its own whsk_ key, an
// Authorization header, a channel and a filter; publishes with an Idempotency-Key
// (the same answered again, another body refused 409), to another channel, and one
// the filter excludes (named in the event's view); a rotation to a whsec_ secret of
// the caller's, after which attempts carry v1 and v1a signatures, verified with the
// npm standardwebhooks and svix (v1), Node's ed25519 (v1a) and `switchboard verify`;
// the event-type catalog (kept with the CLI) refusing data against its schema and,
// strict, a subscription to a type it lacks.
func TestOutboxIntegrationSurface(t *testing.T) {
	node, modules := requireVerifiers(t)
	proxy := newRecordingProxy(t)
	p := startServe(t, filepath.Join(t.TempDir(), "node.db"), "SWITCHBOARD_EGRESS_PROXY=http://"+proxy.ln.Addr().String())
	a := p.account()
	rc := newHookReceiver(t)

	signing, public := webhooksig.NewKeyPair()
	code, out, errOut := webhooksCLI(t, p, a, "create", rc.URL+"/billing", "--secret", signing, "--events", "invoice.paid",
		"--header", "Authorization: Bearer partner-token-0123456789", "--channels", "eu", "--filter", `{"amount":{"$gte":10}}`,
		"--policy", `{"allowHttp":true}`)
	if code != 0 || !strings.Contains(out, "public key: "+public) {
		t.Fatalf("create: %d %s %s", code, out, errOut)
	}
	ep := strings.Fields(out)[1]
	shown := cliJSON(t, p, a, "show", ep)
	if fmt.Sprint(shown["headers"]) != "map[Authorization:Bearer ****6789]" || fmt.Sprint(shown["channels"]) != "[eu]" {
		t.Fatalf("the endpoint shows %v", shown)
	}

	body := map[string]any{"type": "invoice.paid", "channels": []string{"eu"}, "data": map[string]any{"amount": 42}}
	code, first := publishWithKey(t, p, a, "inv-42", body)
	if code != http.StatusCreated {
		t.Fatalf("publish: %d %v", code, first)
	}
	eventID := first["event"].(map[string]any)["id"].(string)
	if code, again := publishWithKey(t, p, a, "inv-42", body); code != http.StatusOK || again["duplicate"] != true ||
		again["event"].(map[string]any)["id"] != eventID {
		t.Fatalf("the same key again: %d %v", code, again)
	}
	other := map[string]any{"type": "invoice.paid", "channels": []string{"eu"}, "data": map[string]any{"amount": 43}}
	if code, conflict := publishWithKey(t, p, a, "inv-42", other); code != http.StatusConflict || !strings.Contains(fmt.Sprint(conflict["detail"]), "inv-42") {
		t.Fatalf("the key with another body: %d %v", code, conflict)
	}
	did := firstDelivery(t, first)
	var pub map[string]any
	p.do("POST", "/api/v1/events", a.APIToken, map[string]any{"type": "invoice.paid", "channels": []string{"us"}, "data": map[string]any{"amount": 99}}, &pub)
	if ds := pub["deliveries"].([]any); len(ds) != 0 {
		t.Fatalf("an event of channel us reached %v", ds)
	}
	p.do("POST", "/api/v1/events", a.APIToken, map[string]any{"type": "invoice.paid", "channels": []string{"eu"}, "data": map[string]any{"amount": 3}}, &pub)
	var view map[string]any
	p.do("GET", "/api/v1/events/"+pub["event"].(map[string]any)["id"].(string), a.APIToken, nil, &view)
	if len(view["deliveries"].([]any)) != 0 || fmt.Sprint(view["excluded"]) != fmt.Sprintf("[map[endpointId:%s reason:filter]]", ep) {
		t.Fatalf("the excluded event's view: %v", view)
	}
	awaitDelivery(t, p, a, ep, did, "SUCCEEDED")

	// Rotate to a whsec_ secret of the caller's: both keys sign for the grace period.
	secret := webhooksig.NewSecret()
	if code, out, errOut := webhooksCLI(t, p, a, "rotate-secret", ep, "--secret", secret); code != 0 || !strings.Contains(out, "secret: "+secret) {
		t.Fatalf("rotate-secret: %d %s %s", code, out, errOut)
	}
	p.do("POST", "/api/v1/events", a.APIToken, map[string]any{"type": "invoice.paid", "channels": []string{"eu"}, "data": map[string]any{"amount": 50}}, &pub)
	awaitDelivery(t, p, a, ep, firstDelivery(t, pub), "SUCCEEDED")
	got := rc.requests("/billing")
	if len(got) != 2 {
		t.Fatalf("the receiver got %d requests, want 2", len(got))
	}
	for i, req := range got {
		if req.header.Get("Authorization") != "Bearer partner-token-0123456789" {
			t.Fatalf("request %d: Authorization %q", i, req.header.Get("Authorization"))
		}
		keys := []string{public}
		if i == 1 {
			keys = append(keys, secret)
			if sigs := strings.Fields(req.header.Get("webhook-signature")); len(sigs) != 2 {
				t.Fatalf("after the rotation, signatures %v, want v1 and v1a", sigs)
			}
		}
		for _, k := range keys {
			verifyWithCLI(t, k, req)
		}
		verifyWithNPM(t, node, modules, keys, req)
	}
	if rcPort := strings.TrimPrefix(rc.URL, "http://"); fmt.Sprint(proxy.targets()) != "["+rcPort+"]" {
		t.Fatalf("the proxy was asked %v, want the receiver's checked address %s", proxy.targets(), rcPort)
	}

	// The catalog: data against its type's schema, and a strict catalog's subscriptions.
	if code, out, errOut := webhooksCLI(t, p, a, "event-types", "create", "invoice.paid", "--description", "An invoice was paid",
		"--schema", `{"type":"object","required":["amount"],"properties":{"amount":{"type":"integer"}}}`); code != 0 || !strings.HasPrefix(out, "invoice.paid  active") {
		t.Fatalf("event-types create: %d %s %s", code, out, errOut)
	}
	if code, out, errOut := webhooksCLI(t, p, a, "event-types", "create", "bad", "--schema", `{"minimum":"0"}`); code != 2 || !strings.Contains(out+errOut, "body.schema.minimum") {
		t.Fatalf("event-types create with a bad schema: %d %s %s", code, out, errOut)
	}
	code, raw := p.do("POST", "/api/v1/events", a.APIToken, map[string]any{"type": "invoice.paid", "data": map[string]any{"amount": 1.5}}, nil)
	if code != http.StatusUnprocessableEntity || !bytes.Contains(raw, []byte(`"location":"body.data.amount"`)) {
		t.Fatalf("data against the schema: %d %s", code, raw)
	}
	if code, out, errOut := webhooksCLI(t, p, a, "event-types", "strict", "on"); code != 0 || !strings.Contains(out, "strict: true") {
		t.Fatalf("event-types strict on: %d %s %s", code, out, errOut)
	}
	code, out, errOut = webhooksCLI(t, p, a, "create", "https://hooks.example.com/x", "--events", "invoice.voided")
	if code != 2 || !strings.Contains(out+errOut, "body.events[0]") {
		t.Fatalf("subscribing to a type a strict catalog lacks: %d %s %s", code, out, errOut)
	}
}

// TestRateLimitAcrossNodes: an endpoint limited to 5 deliveries per second, published
// to through two nodes sharing PostgreSQL, gets all 25 events, and no sooner than one
// bucket for both nodes allows: the k-th arrival is at least (k-5)/5 s after the
// publishes began (two buckets would allow twice that rate).
func TestRateLimitAcrossNodes(t *testing.T) {
	dbURL, _ := pgtest.Schema(t)
	nodes := startCluster(t, dbURL, 2)
	a := nodes[0].account()
	rc := newHookReceiver(t)
	var (
		mu      sync.Mutex
		arrived []time.Time
	)
	rc.script("/limited", func(int) (int, string) {
		mu.Lock()
		arrived = append(arrived, time.Now())
		mu.Unlock()
		return http.StatusNoContent, ""
	})
	var ep map[string]any
	if code, raw := nodes[0].do("POST", "/api/v1/webhooks", a.APIToken, map[string]any{"url": rc.URL + "/limited", "rateLimit": 5,
		"policy": map[string]any{"allowHttp": true}}, &ep); code != http.StatusCreated {
		t.Fatalf("create: %d %s", code, raw)
	}
	start := time.Now()
	for i := range 25 {
		if code, raw := nodes[i%2].do("POST", "/api/v1/events", a.APIToken, map[string]any{"type": "tick", "data": map[string]any{"i": i}}, nil); code != http.StatusCreated {
			t.Fatalf("publish %d: %d %s", i, code, raw)
		}
	}
	pollUntil(t, 60*time.Second, "25 deliveries", func() bool { return len(rc.requests("/limited")) >= 25 })
	mu.Lock()
	defer mu.Unlock()
	if len(arrived) != 25 {
		t.Fatalf("%d arrivals, want 25 (each once)", len(arrived))
	}
	for k := 6; k <= 25; k++ {
		if min := time.Duration(k-5) * time.Second / 5; arrived[k-1].Sub(start) < min {
			t.Fatalf("arrival %d came %s after the publishes began, before one bucket allows (%s)", k, arrived[k-1].Sub(start), min)
		}
	}
}
