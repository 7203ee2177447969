package integration

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestWebhooksCLIChangesAndTail drives `switchboard webhooks publish|update|delete|
// audit|tail` of the real binary against the real `switchboard serve`: tail, started
// first, prints the new delivery and each of its attempts as they happen (a failure,
// then a success on the one-second schedule) and stops on SIGINT with exit 0; update
// changes only what it is given; a refused update exits 2 naming the field and
// changes nothing; delete removes; audit names both with the reasons and the token.
func TestWebhooksCLIChangesAndTail(t *testing.T) {
	p := startServe(t, filepath.Join(t.TempDir(), "node.db"), "SWITCHBOARD_OUTBOX_RETENTION=14d")
	a := p.account()
	rc := newHookReceiver(t)
	rc.script("/hook", func(n int) (int, string) {
		if n == 0 {
			return http.StatusBadGateway, `{"down":true}`
		}
		return http.StatusOK, `{"ok":true}`
	})
	code, out, errOut := webhooksCLI(t, p, a, "create", rc.URL+"/hook", "--events", "order.created", "--policy", `{"scheduleSeconds":[1],"allowHttp":true}`)
	if code != 0 {
		t.Fatalf("create: %d %s %s", code, out, errOut)
	}
	ep := strings.Fields(out)[1]

	// tail, in the background, as a person leaves it open.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	tail := exec.CommandContext(ctx, switchboardBin, "webhooks", "tail", "--interval", "200ms")
	tail.Env = append(cleanEnv(), "SWITCHBOARD_URL="+p.base, "SWITCHBOARD_TOKEN="+a.APIToken)
	stdout, err := tail.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := tail.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := tail.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 64)
	go func() {
		s := bufio.NewScanner(stdout)
		for s.Scan() {
			lines <- s.Text()
		}
		close(lines)
	}()
	ready := bufio.NewScanner(stderr)
	if !ready.Scan() || !strings.Contains(ready.Text(), "following 1 endpoint") {
		t.Fatalf("tail did not start: %q", ready.Text())
	}
	go func() {
		for ready.Scan() { // drain
		}
	}()

	pub := cliJSON(t, p, a, "publish", "order.created", "--data", `{"order":7}`, "--id", "ord-7")
	did := firstDelivery(t, pub)
	var got []string
	deadline := time.After(45 * time.Second)
	for len(got) < 3 {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("tail ended early after %q", got)
			}
			got = append(got, l)
		case <-deadline:
			t.Fatalf("tail printed %q, want the delivery and its two attempts", got)
		}
	}
	for i, want := range []string{"new delivery of event ord-7", "attempt 1  502 http_5xx", "attempt 2  200 success"} {
		if !strings.Contains(got[i], did) || !strings.Contains(got[i], want) {
			t.Errorf("tail line %d: %q, want %q about %s", i+1, got[i], want, did)
		}
	}
	if err := tail.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if err := tail.Wait(); err != nil {
		t.Fatalf("tail after SIGINT: %v", err)
	}

	// update: only what is given; a refused change exits 2 naming the field.
	up := cliJSON(t, p, a, "update", ep, "--events", "order.created,order.paid", "--api-version", "2026-07")
	if up["apiVersion"] != "2026-07" || up["url"] != rc.URL+"/hook" || len(up["events"].([]any)) != 2 {
		t.Fatalf("update: %v", up)
	}
	code, out, errOut = webhooksCLI(t, p, a, "update", ep, "--field", `maxAttempts=3`, "--json")
	if code != 2 || !strings.Contains(out, "maxAttempts") || !strings.Contains(errOut, "422") {
		t.Fatalf("update with an unknown field: %d %s %s", code, out, errOut)
	}
	if show := cliJSON(t, p, a, "show", ep); show["apiVersion"] != "2026-07" {
		t.Fatalf("after a refused update: %v", show)
	}
	if code, out, _ := webhooksCLI(t, p, a, "delete", ep, "--reason", "replaced"); code != 0 || out != "removed "+ep+"\n" {
		t.Fatalf("delete: %d %q", code, out)
	}
	code, out, _ = webhooksCLI(t, p, a, "audit", "--endpoint", ep)
	if code != 0 || !strings.Contains(out, "endpoint.removed") || !strings.Contains(out, "replaced") || !strings.Contains(out, "endpoint.created") ||
		!strings.Contains(out, "tok_") {
		t.Fatalf("audit: %d %s", code, out)
	}
	var entries struct {
		Data []map[string]any `json:"data"`
	}
	if code, out, _ := webhooksCLI(t, p, a, "audit", "--json"); code != 0 || json.Unmarshal([]byte(out), &entries) != nil || len(entries.Data) < 2 {
		t.Fatalf("audit --json: %d %s", code, out)
	}

	// The retention reached the node.
	cmd := exec.Command(switchboardBin, "serve", "--print-config")
	cmd.Env = append(cleanEnv(), "SWITCHBOARD_OUTBOX_RETENTION=14d")
	if cfg, err := cmd.Output(); err != nil || !regexp.MustCompile(`SWITCHBOARD_OUTBOX_RETENTION\s+336h0m0s`).Match(cfg) {
		t.Fatalf("print-config: %v\n%s", err, cfg)
	}
	cmd = exec.Command(switchboardBin, "serve", "--print-config", "--outbox-retention", "20m")
	cmd.Env = cleanEnv()
	if out, _ := cmd.CombinedOutput(); cmd.ProcessState.ExitCode() != 2 || !strings.Contains(string(out), "--outbox-retention") {
		t.Fatalf("a retention of 20m: exit %d %s", cmd.ProcessState.ExitCode(), out)
	}
}
