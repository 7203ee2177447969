package featureserver

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
)

// theSecret is what the private service of TestPrivateAnswersAreNotReadBack knows:
// the test looks for it in everything the account can read.
const theSecret = "hunter2"

// privateService stands for a service on the operator's network that an account
// points its application's hooks at (loopback stands in for a private range through
// the same rule table: the call-control rules let it through, the outbox's do not):
// whatever it is asked, its answer carries theSecret, as JSON, as HTML, as verbs
// that do not validate, or not as HTTP at all.
func privateService(t *testing.T) (base, banner string) {
	t.Helper()
	base = listenHandler(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/call":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `[{"verb":"redirect","actionHook":"/verbs"}]`)
		case "/verbs":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `[{"verb":"`+theSecret+`"}]`)
		case "/html":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, `<p>db_password=`+theSecret+`</p>`)
		default: // the call hook's object, the status hook
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"internal":"secret-config","db_password":"`+theSecret+`"}`)
		}
	}))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			// It answers once it has read the request's first line: a banner written
			// before the request reaches an idle connection, which Go's client drops
			// as unsolicited without quoting it.
			if _, err := bufio.NewReader(c).ReadString('\n'); err == nil {
				_, _ = io.WriteString(c, "HTTP/1.1 "+theSecret+"\r\n\r\n") // a status code Go quotes
			}
			_ = c.Close()
		}
	}()
	return base, "http://" + ln.Addr().String()
}

// An account's application whose hooks point at a private address (reached under
// the call-control rules) cannot read back what is there: not from its status
// hook's delivery log (the response body, an error quoting a non-HTTP answer), its
// calls' records (the timeline's compat warnings and alerts), its alerts, or the
// console's call page. The status code and the outcome stay. With the range in
// SWITCHBOARD_OUTBOX_EGRESS_ALLOW (the operator lets accounts reach and read it),
// every one of them quotes the answer again: the test sees what it guards.
func TestPrivateAnswersAreNotReadBack(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, outboxAllow string
		readable          bool
	}{{"private", "", false}, {"allowed by " + EnvOutboxEgressAllow, "127.0.0.0/8", true}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			svc, banner := privateService(t)
			seen := newAttemptsSeen()
			n := runNodeWith(t, tenantConfig(t, c.outboxAllow), testLogger(), nodeHooks{observe: seen.observe})
			a := n.createAccount("a")
			read := map[string]string{} // what the account reads, by where
			statusHook := map[string]any{"url": svc + "/status"}
			for _, hook := range []string{svc + "/call", svc + "/object", svc + "/html", banner + "/"} {
				sid := n.startCall(a, hook, statusHook)
				v := n.waitCall(a, sid)
				_, _, raw := n.do("GET", "/v1/Accounts/"+a.AccountSid+"/Calls/"+sid, a.APIToken, nil, nil)
				read["the call record of "+hook] = string(raw)
				for _, sd := range v.StatusDeliveries {
					seen.wait(t, sd.DeliveryID)
					_, _, raw := n.do("GET", "/api/v1/webhooks/"+sd.EndpointID+"/deliveries/"+sd.DeliveryID, a.APIToken, nil, nil)
					read["the status delivery "+sd.DeliveryID] += string(raw)
				}
				cookie := consoleSignIn(t, n.base, a.APIToken)
				req, _ := http.NewRequest("GET", n.base+"/console/calls/"+sid, nil)
				req.AddCookie(&http.Cookie{Name: "switchboard_session", Value: cookie})
				resp, err := noRedirects.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				read["the console's page of the call to "+hook] = readAll(t, resp)
			}
			_, _, raw := n.do("GET", "/v1/Accounts/"+a.AccountSid+"/Alerts", a.APIToken, nil, nil)
			read["the alerts"] = string(raw)

			for where, text := range read {
				if !c.readable && strings.Contains(text, theSecret) {
					t.Errorf("%s quotes the private service:\n%s", where, text)
				}
			}
			wantQuoted := []string{"the call record of " + svc + "/call", "the call record of " + svc + "/object",
				"the call record of " + svc + "/html", "the call record of " + banner + "/", "the alerts"}
			for _, where := range wantQuoted {
				if quoted := strings.Contains(read[where], theSecret); quoted != c.readable {
					t.Errorf("%s: quotes the answer %v, want %v:\n%s", where, quoted, c.readable, read[where])
				}
				if !c.readable && !strings.Contains(read[where], "not quoted") {
					t.Errorf("%s does not say what it did not quote:\n%s", where, read[where])
				}
			}
			statusQuoted := 0
			for where, text := range read {
				if strings.HasPrefix(where, "the status delivery ") && strings.Contains(text, theSecret) {
					statusQuoted++
				}
			}
			if c.readable && statusQuoted == 0 || !c.readable && statusQuoted > 0 {
				t.Errorf("%d status deliveries quote the status hook's answer (readable: %v)", statusQuoted, c.readable)
			}
		})
	}
}
