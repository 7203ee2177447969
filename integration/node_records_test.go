package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/internal/testkit"
)

// statusReceiver is a status hook that records every notification by call and
// status, and signals each arrival.
type statusReceiver struct {
	*httptest.Server
	mu      sync.Mutex
	got     map[string]map[string]map[string]any // call sid → call_status → payload
	arrived chan struct{}
}

func newStatusReceiver(t *testing.T) *statusReceiver {
	t.Helper()
	r := &statusReceiver{got: map[string]map[string]map[string]any{}, arrived: make(chan struct{}, 1)}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		var p map[string]any
		if json.Unmarshal(body, &p) == nil {
			sid, _ := p["call_sid"].(string)
			status, _ := p["call_status"].(string)
			r.mu.Lock()
			if r.got[sid] == nil {
				r.got[sid] = map[string]map[string]any{}
			}
			r.got[sid][status] = p
			r.mu.Unlock()
			select {
			case r.arrived <- struct{}{}:
			default:
			}
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(r.Close)
	return r
}

// await waits until cond holds over what arrived, or fails after timeout.
func (r *statusReceiver) await(t *testing.T, timeout time.Duration, what string, cond func(got map[string]map[string]map[string]any) bool) {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		r.mu.Lock()
		ok := cond(r.got)
		r.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-r.arrived:
		case <-deadline.C:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// activeCalls reads switchboard_calls_active from /metrics.
func (p *serveProcess) activeCalls() int {
	p.t.Helper()
	_, raw := p.do("GET", "/metrics", "", nil, nil)
	m := regexp.MustCompile(`(?m)^switchboard_calls_active (\d+)`).FindSubmatch(raw)
	if m == nil {
		p.t.Fatalf("no switchboard_calls_active in /metrics")
	}
	n, _ := strconv.Atoi(string(m[1]))
	return n
}

// rssBytes is the node process's resident memory (Linux /proc).
func (p *serveProcess) rssBytes() int64 {
	p.t.Helper()
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		p.t.Fatalf("reading the node's memory: %v", err)
	}
	m := regexp.MustCompile(`(?m)^VmRSS:\s+(\d+) kB`).FindSubmatch(status)
	if m == nil {
		p.t.Fatalf("no VmRSS in /proc status:\n%s", status)
	}
	kb, _ := strconv.ParseInt(string(m[1]), 10, 64)
	return kb << 10
}

// stop sends SIGTERM and waits for a clean exit.
func (p *serveProcess) stop() {
	p.t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		p.t.Fatal(err)
	}
	select {
	case err := <-p.exited:
		p.exited <- err // for the cleanup
		if err != nil {
			p.t.Fatalf("serve exit after SIGTERM: %v\n%s", err, p.stderr)
		}
	case <-time.After(60 * time.Second):
		p.t.Fatalf("serve did not stop after SIGTERM\n%s", p.stderr)
	}
}

// 16 clients create 5,000 calls against a loopback app: every record ends with its
// real status and reason, /metrics shows no active call, every call's final status
// notification arrives; after SIGTERM the next start relabels nothing.
//
// Not parallel: the package's parallel tests wait while it runs, so that its 10,000
// status deliveries, each synced to disk, do not share two cores with them.
func TestServeKeepsEveryRecordUnderLoad(t *testing.T) {
	const clients, total = 16, 5000
	status := newStatusReceiver(t)
	app := verbsApp(t, `[{"verb":"say","text":"hi"},{"verb":"hangup"}]`)
	db := filepath.Join(t.TempDir(), "node.db")
	p := startServe(t, db)
	a := p.account()
	appSid := p.createApplication(a, "load", app.URL+"/call", status.URL+"/status")

	sids := make(chan string, total)
	work := make(chan int, total)
	for i := range total {
		work <- i
	}
	close(work)
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			for range work {
				code, raw := p.do("POST", "/v1/Accounts/"+a.AccountSid+"/Calls", a.APIToken,
					map[string]any{"application_sid": appSid, "from": "+1555", "to": "+1666"}, nil)
				if code != http.StatusCreated {
					t.Errorf("create call: %d %s", code, raw)
					return
				}
				var c serveCall
				_ = json.Unmarshal(raw, &c)
				sids <- c.CallSid
			}
		})
	}
	wg.Wait()
	close(sids)
	if t.Failed() {
		t.FailNow()
	}
	var all []string
	for sid := range sids {
		all = append(all, sid)
	}

	deadline := time.Now().Add(5 * time.Minute)
	for p.activeCalls() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d calls still active", p.activeCalls())
		}
		time.Sleep(100 * time.Millisecond) // across processes: poll with a deadline
	}
	missing := func(got map[string]map[string]map[string]any) int {
		n := 0
		for _, sid := range all {
			if got[sid]["completed"] == nil {
				n++
			}
		}
		return n
	}
	defer func() {
		if t.Failed() {
			status.mu.Lock()
			t.Logf("%d final notifications missing", missing(status.got))
			status.mu.Unlock()
			_, raw := p.do("GET", "/metrics", "", nil, nil)
			for _, l := range strings.Split(string(raw), "\n") {
				if strings.HasPrefix(l, "switchboard_outbox") {
					t.Log(l)
				}
			}
		}
	}()
	status.await(t, 15*time.Minute, "every call's final status notification", func(got map[string]map[string]map[string]any) bool {
		return missing(got) == 0
	})
	// Every record, as the API reads it from the store.
	check := make(chan string, len(all))
	for _, sid := range all {
		check <- sid
	}
	close(check)
	for range clients {
		wg.Go(func() {
			for sid := range check {
				var c serveCall
				if code, raw := p.do("GET", "/v1/Accounts/"+a.AccountSid+"/Calls/"+sid, a.APIToken, nil, &c); code != http.StatusOK ||
					c.Active || c.CallStatus != "completed" || c.Reason != "hangup-verb" {
					t.Errorf("call %s: %d %s", sid, code, raw)
					return
				}
			}
		})
	}
	wg.Wait()
	p.stop()
	if strings.Contains(p.stderr.String(), "saving the call record failed") {
		t.Errorf("a save failed under load:\n%s", lastLines(p.stderr.String(), 20))
	}
	again := startServe(t, db)
	if c := again.waitCall(a, all[len(all)/2]); c.Reason != "hangup-verb" {
		t.Errorf("after the restart a call reads %s/%s", c.CallStatus, c.Reason)
	}
	if strings.Contains(again.stderr.String(), "node-restart") {
		t.Errorf("the start after a clean stop relabelled calls:\n%s", lastLines(again.stderr.String(), 20))
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// A call a crash cut short gets its final status notification at the next start,
// with its call info (customerData included), and its record names the delivery.
func TestServeNotifiesTheEndOfCallsCutShortByACrash(t *testing.T) {
	t.Parallel()
	status := newStatusReceiver(t)
	app := verbsApp(t, pausingVerbs)
	db := filepath.Join(t.TempDir(), "node.db")
	p := startServe(t, db)
	a := p.account()
	sid := p.startCall(a, testkit.WithSpeech(map[string]any{"call_hook": map[string]any{"url": app.URL + "/call"},
		"call_status_hook": map[string]any{"url": status.URL + "/status"}, "from": "a", "to": "b", "tag": map[string]any{"order": "42"}}))
	status.await(t, 30*time.Second, "the in-progress notification", func(got map[string]map[string]map[string]any) bool {
		return got[sid]["in-progress"] != nil
	})
	p.kill()
	again := startServe(t, db)
	defer func() {
		if t.Failed() {
			t.Log(again.stderr.String())
		}
	}()
	status.await(t, 30*time.Second, "the final notification after the restart", func(got map[string]map[string]map[string]any) bool {
		return got[sid]["completed"] != nil
	})
	status.mu.Lock()
	final, before := status.got[sid]["completed"], status.got[sid]["in-progress"]
	status.mu.Unlock()
	if final["sip_status"] != float64(200) || final["call_id"] != before["call_id"] || final["trace_id"] != before["trace_id"] ||
		fmt.Sprint(final["customerData"]) != "map[order:42]" {
		t.Errorf("final notification %v; want SIP 200 with the call info of %v", final, before)
	}
	var c struct {
		serveCall
		Deliveries []map[string]any `json:"status_deliveries"`
	}
	if code, raw := again.do("GET", "/v1/Accounts/"+a.AccountSid+"/Calls/"+sid, a.APIToken, nil, &c); code != http.StatusOK ||
		c.Active || c.Reason != "node-restart" || len(c.Deliveries) == 0 {
		t.Errorf("the call after the restart: %d %s", code, raw)
	}
}

// A second serve on the database of a running node refuses to start, saying why,
// and changes nothing: the running node's call stays active.
func TestServeRefusesASecondNodeOnTheDatabase(t *testing.T) {
	t.Parallel()
	app := verbsApp(t, pausingVerbs)
	db := filepath.Join(t.TempDir(), "node.db")
	p := startServe(t, db)
	a := p.account()
	sid := p.startCallTo(a, app.URL)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	second := exec.CommandContext(ctx, switchboardBin, "serve", "--listen", "127.0.0.1:0", "--database-url", "sqlite:"+db)
	second.Env = cleanEnv()
	out, err := second.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "in use by process") || !strings.Contains(string(out), db+".lock") {
		t.Errorf("second serve: %v\n%s\nwant a failure naming the process holding %s.lock", err, out, db)
	}
	var c serveCall
	if code, raw := p.do("GET", "/v1/Accounts/"+a.AccountSid+"/Calls/"+sid, a.APIToken, nil, &c); code != http.StatusOK || !c.Active {
		t.Errorf("the running node's call: %d %s", code, raw)
	}
}

// An application that answers every hook with a redirect to itself: the call ends
// at its request limit with reason max-requests, its record bounded.
func TestServeEndsASelfRedirectingApp(t *testing.T) {
	t.Parallel()
	app := testkit.NewRedirectLoop(t)
	p := startServe(t, filepath.Join(t.TempDir(), "node.db"))
	a := p.account()
	sid := p.startCallTo(a, app.URL+"/loop")
	c := p.waitCall(a, sid)
	_, raw := p.do("GET", "/v1/Accounts/"+a.AccountSid+"/Calls/"+sid, a.APIToken, nil, nil)
	if hits := app.Hits(); c.Reason != "max-requests" || hits != 1000 || len(raw) > 1<<20 {
		t.Errorf("self-redirecting call: %s after %d requests, a record of %d bytes; want max-requests after 1000, under 1 MiB", c.Reason, hits, len(raw))
	}
	// The node's memory stays that of a small process (a loop without bound grew
	// its record by 400 KB a second).
	rss := p.rssBytes()
	if rss > 256<<20 {
		t.Errorf("the node's resident memory is %d MiB after the loop", rss>>20)
	}
	t.Logf("record %d bytes, node RSS %d MiB", len(raw), rss>>20)
}
