package fragment

import (
	"errors"
	"strconv"
	"strings"
	"testing"
)

func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"https://h/p#rc=3&rp=5xx,ct", "wss://h/p#rc=0", "ws://h/p#rc=-1&rp=bogus", "https://h/p#rc=%zz",
		"http://u:p@[::1]:80/x?y=1#rc=99999999999999999999&rp=all,all", "ftp://x", "", "#rc=1",
		"https://h/p#rp=5XX%2Cct&rc=+2", "wss://h/p#rc=5&rc=1&rp=&rp=rt",
	} {
		f.Add(seed, "/gather#rc=1")
	}
	f.Fuzz(func(t *testing.T, raw, hook string) {
		target, err := Parse(raw)
		if err != nil {
			if !errors.Is(err, ErrInvalidURL) {
				t.Fatalf("error %v does not wrap ErrInvalidURL", err)
			}
			if ui, _, ok := userInfo(raw); ok {
				// Refused for its user-info, naming the URL only as Redact shows it.
				shown := strconv.Quote(Redact(raw))
				rest := strings.Replace(strings.ReplaceAll(err.Error(), "(user:password@)", ""), shown, "", 1)
				if !errors.Is(err, ErrUserInfo) || !strings.Contains(err.Error(), shown) || (len(ui) > 1 && strings.Contains(rest, ui)) {
					t.Fatalf("error %q for %q: want ErrUserInfo naming only %s", err, raw, shown)
				}
			}
			return
		}
		checkInvariants(t, target)
		if resolved, err := Resolve(target, hook); err == nil {
			checkInvariants(t, resolved)
		} else if !errors.Is(err, ErrInvalidURL) {
			t.Fatalf("Resolve error %v does not wrap ErrInvalidURL", err)
		}
		e := Explain(target, Timeouts{})
		if e.AttemptsToFailure < 1 || e.AttemptsToFailure > target.Policy.MaxAttempts() || e.TimeToFailure <= 0 {
			t.Fatalf("explanation out of range: %+v", e)
		}
	})
}

func checkInvariants(t *testing.T, target Target) {
	t.Helper()
	p := target.Policy
	if p.RetryCount < 0 || p.RetryCount > MaxRetryCount {
		t.Fatalf("rc %d out of [0, %d]", p.RetryCount, MaxRetryCount)
	}
	if p.Transport != HTTP && p.Transport != WebSocket {
		t.Fatalf("transport %q", p.Transport)
	}
	if len(p.RetryOn) == 0 {
		t.Fatal("empty rp")
	}
	for _, c := range p.RetryOn {
		if !strings.Contains("ct rt 4xx 5xx all", string(c)) {
			t.Fatalf("unknown class %q in rp", c)
		}
	}
	if target.URL.User != nil {
		t.Fatalf("URL with user-info accepted: %q", target.Clean())
	}
	if target.URL.Fragment != "" || target.URL.RawFragment != "" {
		t.Fatalf("clean URL keeps a fragment: %q", target.Clean())
	}
	if p.RetriesHandshakeTimeout() && p.Transport != WebSocket {
		t.Fatal("handshake timeouts retried on HTTP")
	}
	if p.RetryCountDefault && p.RetryCount != DefaultRetryCount(p.Transport) {
		t.Fatalf("default rc %d for %s", p.RetryCount, p.Transport)
	}
}
