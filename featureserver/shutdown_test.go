package featureserver

import (
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/switchboard-voice/switchboard/internal/testkit"
)

// A client's connection that never sent a request (net/http counts it idle only
// once it is 5 s old) does not make a clean stop fail: past the shutdown grace the
// node closes it, logs that at warn, and Run returns nil.
func TestStopClosesConnectionsLeftOpen(t *testing.T) {
	t.Parallel()
	var logs testkit.SyncBuffer
	n := runNodeWith(t, testConfig(t), zerolog.New(&logs), nodeHooks{shutdownGrace: 50 * time.Millisecond})
	idle, err := net.Dial("tcp", strings.TrimPrefix(n.base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	// The server accepts connections in the order they came: once a request on a
	// later one is answered, the idle one is the server's (StateNew).
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Get(n.base + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	n.stop() // fails the test when Run returns an error
	if err := idle.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := idle.Read(make([]byte, 1)); err != io.EOF {
		t.Errorf("the idle connection after the stop: %v, want it closed (EOF)", err)
	}
	if !strings.Contains(logs.String(), `"level":"warn"`) || !strings.Contains(logs.String(), "still open after the shutdown grace") {
		t.Errorf("no warning of the connections closed:\n%s", logs.String())
	}
}

// A browser pointed at the node is sent to the console, and the start-up line names
// the console's URL; any other unknown path stays a 404.
func TestRootRedirectsToTheConsole(t *testing.T) {
	t.Parallel()
	logs := newLogBuffer()
	n := runNodeWith(t, testConfig(t), zerolog.New(logs), nodeHooks{})
	logs.waitLine(t, "info", func(l map[string]any) bool {
		return l["message"] == "switchboard node listening" && l["console"] == n.base+"/console/"
	})
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Get(n.base + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != "/console/" {
		t.Fatalf("GET /: %d, Location %q; want 302 to /console/", resp.StatusCode, resp.Header.Get("Location"))
	}
	resp, err = client.Get(n.base + "/nothing-here")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("GET /nothing-here: %d, want 404", resp.StatusCode)
	}
}
