package featureserver

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/switchboard-voice/switchboard/featureserver/internal/nodeapi"
	"github.com/switchboard-voice/switchboard/internal/testkit"
)

const testAdminToken = "admin-token-for-tests-0123456789"

// testNode is a node running on loopback with a temporary SQLite file.
type testNode struct {
	t    *testing.T
	cfg  Config
	node *Node
	base string
	stop func() // cancels the node (as SIGTERM does) and waits for Run to return
	done chan error
}

func startNode(t *testing.T, mutate func(*Config)) *testNode {
	t.Helper()
	cfg := testConfig(t)
	if mutate != nil {
		mutate(&cfg)
	}
	return runNode(t, cfg)
}

// testConfig is the configuration of a test node: loopback, a temporary SQLite file,
// hooks allowed to loopback.
func testConfig(t *testing.T) Config {
	t.Helper()
	cfg, err := LoadConfig(envOf(map[string]string{
		EnvListen:      "127.0.0.1:0",
		EnvDatabaseURL: "sqlite:" + filepath.Join(t.TempDir(), "node.db"),
		EnvAdminToken:  testAdminToken,
		EnvEgressAllow: "127.0.0.0/8",
		// The tests' webhook receivers listen on loopback too.
		EnvOutboxEgressAllow: "127.0.0.0/8",
		EnvDrainTimeout:      "5000",
	}), nil)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// startNodeOn starts a new node on the database of a stopped one.
func startNodeOn(t *testing.T, old *testNode) *testNode {
	t.Helper()
	return runNode(t, old.cfg)
}

func runNode(t *testing.T, cfg Config) *testNode {
	t.Helper()
	return runNodeWith(t, cfg, testLogger(), nodeHooks{})
}

// runNodeWith runs a node logging to log, with the hooks of a test.
func runNodeWith(t *testing.T, cfg Config, log zerolog.Logger, hooks nodeHooks) *testNode {
	t.Helper()
	if hooks.probeTimeout == 0 {
		// /readyz's write probe must not time out because the machine is slow: a
		// test asserting 503 makes the write fail, never merely late.
		hooks.probeTimeout = time.Minute
	}
	node, err := newNode(context.Background(), cfg, NodeOptions{Version: "test", Logger: log}, hooks)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	addr := make(chan net.Addr, 1)
	n := &testNode{t: t, cfg: cfg, node: node, done: make(chan error, 1)}
	go func() { n.done <- node.Run(ctx, func(a net.Addr) { addr <- a }) }()
	select {
	case a := <-addr:
		n.base = "http://" + a.String()
	case err := <-n.done:
		t.Fatalf("node did not start: %v", err)
	}
	stopped := false
	n.stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-n.done; err != nil {
			t.Errorf("node stopped with %v", err)
		}
		http.DefaultClient.CloseIdleConnections()
	}
	t.Cleanup(n.stop)
	return n
}

// do sends a request and decodes a JSON answer into out (when not nil).
func (n *testNode) do(method, path, token string, body any, out any) (int, http.Header, []byte) {
	n.t.Helper()
	return n.doWithOut(method, path, token, body, nil, out)
}

// doWith is do with more request headers, decoding nothing.
func (n *testNode) doWith(method, path, token string, body any, header http.Header) (int, http.Header, []byte) {
	n.t.Helper()
	return n.doWithOut(method, path, token, body, header, nil)
}

func (n *testNode) doWithOut(method, path, token string, body any, header http.Header, out any) (int, http.Header, []byte) {
	n.t.Helper()
	resp, raw := testkit.DoJSON(n.t, method, n.base+path, token, body, header, out)
	return resp.StatusCode, resp.Header, raw
}

type testAccount struct {
	AccountSid    string `json:"account_sid"`
	APIToken      string `json:"api_token"`
	WebhookSecret string `json:"webhook_secret"`
}

func (n *testNode) createAccount(name string) testAccount {
	n.t.Helper()
	var a testAccount
	if code, _, raw := n.do("POST", "/v1/Accounts", testAdminToken, map[string]any{"name": name}, &a); code != http.StatusCreated {
		n.t.Fatalf("create account: %d %s", code, raw)
	}
	return a
}

// waitCall waits until the node has recorded the end of a call, and returns the call
// as the API shows it then.
func (n *testNode) waitCall(acct testAccount, callSid string) nodeapi.CallView {
	n.t.Helper()
	select {
	case <-n.node.calls.Ended(callSid):
	case <-time.After(20 * time.Second):
		n.t.Fatalf("call %s still active", callSid)
	}
	var v nodeapi.CallView
	code, _, raw := n.do("GET", "/v1/Accounts/"+acct.AccountSid+"/Calls/"+callSid, acct.APIToken, nil, &v)
	if code != http.StatusOK {
		n.t.Fatalf("get call: %d %s", code, raw)
	}
	if v.Active {
		n.t.Fatalf("call %s ended but shows as active: %+v", callSid, v)
	}
	return v
}

func timelineKinds(v nodeapi.CallView) []string {
	kinds := make([]string, len(v.Timeline))
	for i, raw := range v.Timeline {
		var e struct {
			Kind string `json:"kind"`
		}
		_ = json.Unmarshal(raw, &e)
		kinds[i] = e.Kind
	}
	return kinds
}

// testLogger shows the node's logs with -v when SWITCHBOARD_TEST_LOGS is set.
func testLogger() zerolog.Logger {
	if os.Getenv("SWITCHBOARD_TEST_LOGS") == "" {
		return zerolog.Nop()
	}
	return zerolog.New(os.Stderr).Level(zerolog.DebugLevel)
}
