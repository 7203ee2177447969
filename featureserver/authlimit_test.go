package featureserver

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

// clientFrom is an HTTP client whose connections come from the loopback address ip.
func clientFrom(t *testing.T, ip string) *http.Client {
	t.Helper()
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	tr := &http.Transport{DialContext: d.DialContext}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// send makes one request through c and returns its status and Retry-After.
func send(t *testing.T, c *http.Client, method, u, token string, form url.Values) (int, string) {
	t.Helper()
	var body *strings.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	} else {
		body = strings.NewReader("")
	}
	req, _ := http.NewRequest(method, u, body)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Retry-After")
}

// 1,000 wrong tokens from one address turn to 429 with Retry-After, on the call API,
// the outbox API, the admin routes and the console's sign-in alike; a right token
// from another address is served as ever, and a right token never counts.
func TestFailedAuthenticationIsLimited(t *testing.T) {
	t.Parallel()
	n := startNode(t, nil)
	a := n.createAccount("a")
	apps := n.base + "/v1/Accounts/" + a.AccountSid + "/Applications"
	routes := []struct {
		name, ip, method, url string
		signIn                bool
	}{
		{"call API", "127.0.0.11", "GET", apps, false},
		{"outbox API", "127.0.0.12", "GET", n.base + "/api/v1/webhooks", false},
		{"admin", "127.0.0.13", "GET", n.base + "/v1/Accounts", false},
		{"console sign-in", "127.0.0.14", "POST", n.base + "/console/signin", true},
	}
	for _, r := range routes {
		c := clientFrom(t, r.ip)
		var refused, denied int
		last := ""
		for i := range 1000 {
			wrong := fmt.Sprintf("wrong-token-%04d-0123456789abcdefghij", i)
			var code int
			if r.signIn {
				code, last = send(t, c, r.method, r.url, "", url.Values{"token": {wrong}})
			} else {
				code, last = send(t, c, r.method, r.url, wrong, nil)
			}
			switch code {
			case http.StatusUnauthorized:
				denied++
			case http.StatusTooManyRequests:
				refused++
			default:
				t.Fatalf("%s: wrong token %d answered %d", r.name, i, code)
			}
		}
		if secs, err := strconv.Atoi(last); refused < 500 || err != nil || secs < 1 {
			t.Errorf("%s: %d answers 401, %d 429 (last Retry-After %q); want most 429 with Retry-After", r.name, denied, refused, last)
		}
	}
	other := clientFrom(t, "127.0.0.21")
	for range 50 { // a right token is served, and costs nothing
		if code, after := send(t, other, "GET", apps, a.APIToken, nil); code != http.StatusOK || after != "" {
			t.Fatalf("the right token from another address: %d (Retry-After %q)", code, after)
		}
	}
	if code, _ := send(t, other, "GET", n.base+"/api/v1/webhooks", a.APIToken, nil); code != http.StatusOK {
		t.Fatalf("the right token on the outbox API from another address: %d", code)
	}
	if code, _ := send(t, other, "GET", n.base+"/v1/Accounts", testAdminToken, nil); code != http.StatusOK {
		t.Fatalf("the admin token from another address: %d", code)
	}
}

// Wrong tokens for one account spread over many addresses spend the account's
// budget: then addresses that never authenticated for it are refused, while one
// that did keeps working; another account is not affected.
func TestFailuresSpreadOverAddressesAreLimitedPerAccount(t *testing.T) {
	t.Parallel()
	n := startNode(t, nil)
	a, b := n.createAccount("a"), n.createAccount("b")
	apps := func(acct testAccount) string { return n.base + "/v1/Accounts/" + acct.AccountSid + "/Applications" }
	known := clientFrom(t, "127.0.2.1")
	if code, _ := send(t, known, "GET", apps(a), a.APIToken, nil); code != http.StatusOK {
		t.Fatalf("a's client: %d", code)
	}
	for i := range 150 { // 10 wrong tokens from each of 15 addresses: within each address's budget
		c := clientFrom(t, fmt.Sprintf("127.0.3.%d", i/10+1))
		send(t, c, "GET", apps(a), fmt.Sprintf("wrong-%d", i), nil)
	}
	stranger := clientFrom(t, "127.0.4.1")
	if code, after := send(t, stranger, "GET", apps(a), "wrong-again", nil); code != http.StatusTooManyRequests || after == "" {
		t.Errorf("a new address on the attacked account: %d (Retry-After %q), want 429", code, after)
	}
	if code, _ := send(t, known, "GET", apps(a), a.APIToken, nil); code != http.StatusOK {
		t.Errorf("the account's known client during the attack: %d, want 200", code)
	}
	if code, _ := send(t, stranger, "GET", apps(b), b.APIToken, nil); code != http.StatusOK {
		t.Errorf("another account from the same address: %d, want 200", code)
	}
}
