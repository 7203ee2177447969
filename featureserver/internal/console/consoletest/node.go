package consoletest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/switchboard-voice/switchboard/featureserver"
	"github.com/switchboard-voice/switchboard/internal/testkit"
)

// AdminToken is the admin token of the nodes Start runs.
const AdminToken = "console-test-admin-token-0123456789"

// Node is a node running on loopback.
type Node struct {
	// Base is its http:// URL.
	Base string
	stop func() error
}

// Start runs a node on a new SQLite file in dir, allowed to reach loopback hooks
// and receivers. Stop it with Stop.
func Start(dir string, log zerolog.Logger) (*Node, error) {
	env := map[string]string{
		featureserver.EnvListen:            "127.0.0.1:0",
		featureserver.EnvDatabaseURL:       "sqlite:" + filepath.Join(dir, "node.db"),
		featureserver.EnvAdminToken:        AdminToken,
		featureserver.EnvEgressAllow:       "127.0.0.0/8",
		featureserver.EnvOutboxEgressAllow: "127.0.0.0/8",
		featureserver.EnvDrainTimeout:      "0",
	}
	cfg, err := featureserver.LoadConfig(func(k string) string { return env[k] }, nil)
	if err != nil {
		return nil, err
	}
	node, err := featureserver.NewNode(context.Background(), cfg, featureserver.NodeOptions{Version: "test", Logger: log})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	addr, done := make(chan net.Addr, 1), make(chan error, 1)
	go func() { done <- node.Run(ctx, func(a net.Addr) { addr <- a }) }()
	n := &Node{}
	select {
	case a := <-addr:
		n.Base = "http://" + a.String()
	case err := <-done:
		cancel()
		return nil, fmt.Errorf("node did not start: %w", err)
	}
	var once sync.Once
	var stopErr error
	n.stop = func() error {
		once.Do(func() { cancel(); stopErr = <-done })
		return stopErr
	}
	return n, nil
}

// Stop stops the node and waits for it.
func (n *Node) Stop() error { return n.stop() }

// Account is an account of the node.
type Account struct {
	AccountSid string `json:"account_sid"`
	APIToken   string `json:"api_token"`
}

// CreateAccount creates an account through the admin API.
func (n *Node) CreateAccount(name string) (Account, error) {
	var a Account
	err := n.Do(http.MethodPost, "/v1/Accounts", AdminToken, map[string]any{"name": name}, &a)
	return a, err
}

// Do sends a JSON request with token and decodes a 2xx answer into out; another
// answer is an error holding its status and body.
func (n *Node) Do(method, path, token string, body, out any) error {
	req, err := testkit.JSONRequest(method, n.Base+path, token, body)
	if err != nil {
		return err
	}
	resp, raw, err := testkit.Exchange(req)
	if err != nil {
		return err
	}
	if resp.StatusCode >= 300 {
		return &StatusError{Status: resp.StatusCode, Body: string(raw)}
	}
	if out != nil && len(raw) > 0 {
		return json.Unmarshal(raw, out)
	}
	return nil
}

// StatusError is an answer of the node that is not 2xx.
type StatusError struct {
	Status int
	Body   string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("%d %s", e.Status, strings.TrimSpace(e.Body))
}

// Poll calls cond until it holds, at most until timeout: the way to wait for what a
// node does asynchronously (an attempt recorded, a call ended) from outside it.
func Poll(timeout time.Duration, what string, cond func() (bool, error)) error {
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, err := cond()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return errors.New("timed out waiting for " + what)
		}
		<-tick.C
	}
}

// Receiver is a webhook receiver on loopback answering each request with the
// status and body Answer gives for its number (from 0).
type Receiver struct {
	URL    string
	srv    *http.Server
	ln     net.Listener
	mu     sync.Mutex
	n      int
	answer func(n int) (int, string)
}

// NewReceiver starts a receiver.
func NewReceiver(answer func(n int) (status int, body string)) (*Receiver, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	rc := &Receiver{ln: ln, URL: "http://" + ln.Addr().String() + "/hook", answer: answer}
	rc.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		rc.mu.Lock()
		n, answer := rc.n, rc.answer
		rc.n++
		rc.mu.Unlock()
		status, body := answer(n)
		if strings.HasPrefix(strings.TrimSpace(body), "{") {
			w.Header().Set("Content-Type", "application/json")
		} else {
			w.Header().Set("Content-Type", "text/html")
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = rc.srv.Serve(ln) }()
	return rc, nil
}

// SetAnswer replaces the receiver's script.
func (rc *Receiver) SetAnswer(answer func(n int) (int, string)) {
	rc.mu.Lock()
	rc.answer = answer
	rc.mu.Unlock()
}

// Close stops the receiver.
func (rc *Receiver) Close() error { return rc.srv.Close() }
