package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/cmd/switchboard/internal/sigcheck"
	"github.com/switchboard-voice/switchboard/transport/webhooksig"
)

// verifyCLI runs `switchboard verify` with stdin as the piped body.
func verifyCLI(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(context.Background(), append([]string{"verify"}, args...), strings.NewReader(stdin), &out, &errOut,
		func(string) string { return "" })
	return code, out.String(), errOut.String()
}

// standardHeaders signs body with keys (whsec_ / whsk_) and returns the three headers
// as -H arguments.
func standardHeaders(t *testing.T, id string, sent time.Time, body string, keys ...string) []string {
	t.Helper()
	s, err := webhooksig.NewSigner(keys...)
	if err != nil {
		t.Fatal(err)
	}
	h, err := s.Headers(id, sent, []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	var args []string
	for _, name := range []string{webhooksig.HeaderID, webhooksig.HeaderTimestamp, webhooksig.HeaderSignature} {
		args = append(args, "-H", name+": "+h.Get(name))
	}
	return args
}

func jambonzHeader(secret string, sent time.Time, body string) []string {
	return []string{"-H", "Jambonz-Signature: " + webhooksig.SignJambonz(secret, sent, []byte(body))}
}

func writeVerifyFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func joinArgs(parts ...[]string) []string {
	var out []string
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// Keys shared by the tests below; each is random, so nothing matches by accident.
var (
	verifySecret        = webhooksig.NewSecret()
	verifyOtherSecret   = webhooksig.NewSecret()
	verifySigningKey    string
	verifyPublicKey     string
	verifyJambonzSecret = "plain-webhook-secret-0123456789"
	verifyBody          = `{"type":"call.status","call_sid":"CA1","call_status":"completed"}`
)

func init() { verifySigningKey, verifyPublicKey = webhooksig.NewKeyPair() }

func secretFlags(keys ...string) []string {
	var out []string
	for _, k := range keys {
		out = append(out, "--secret", k)
	}
	return out
}

// assertNoSecret fails when any key given to the command shows up in its output.
func assertNoSecret(t *testing.T, output string) {
	t.Helper()
	for _, k := range []string{verifySecret, verifyOtherSecret, verifySigningKey, verifyJambonzSecret} {
		if strings.Contains(output, k) {
			t.Errorf("a secret was printed: %q", output)
		}
	}
}

func TestVerifyValid(t *testing.T) {
	t.Parallel()
	sent := time.Now().Add(-3 * time.Second)
	old := time.Now().Add(-2 * time.Hour)
	bodyFile := writeVerifyFile(t, "body.json", verifyBody)
	std := standardHeaders(t, "msg_1", sent, verifyBody, verifySecret)
	headersFile := writeVerifyFile(t, "request.txt", "POST /status HTTP/1.1\r\nHost: app.example.com\r\nContent-Type: application/json\r\n"+
		strings.Join([]string{std[1], std[3], std[5]}, "\r\n")+"\r\n\r\n"+verifyBody)
	tests := []struct {
		name  string
		stdin string
		args  []string
		want  []string
	}{
		{"v1 body on stdin", verifyBody, joinArgs(secretFlags(verifySecret), std),
			[]string{"valid: Standard Webhooks v1 signature, webhook-id msg_1, sent ", "s ago)"}},
		{"v1 body from a file", "", joinArgs(secretFlags(verifySecret), std, []string{"--body", bodyFile}),
			[]string{"valid: Standard Webhooks v1 signature"}},
		{"body - is stdin", verifyBody, joinArgs(secretFlags(verifySecret), std, []string{"--body", "-"}),
			[]string{"valid: Standard Webhooks v1"}},
		{"rotation: second secret matches", verifyBody, joinArgs(secretFlags(verifyOtherSecret, verifySecret), std),
			[]string{"valid: Standard Webhooks v1 signature (--secret #2)"}},
		{"v1a with the public key", verifyBody, joinArgs(secretFlags(verifyPublicKey), standardHeaders(t, "msg_2", sent, verifyBody, verifySigningKey)),
			[]string{"valid: Standard Webhooks v1a signature, webhook-id msg_2"}},
		{"header names any case, values trimmed", verifyBody, joinArgs(secretFlags(verifySecret),
			[]string{"-H", "WEBHOOK-ID:   msg_1  ", "-H", strings.ToUpper(std[3][:17]) + std[3][17:], "--header", std[5]}),
			[]string{"valid: Standard Webhooks v1"}},
		{"headers file from a request dump", "", joinArgs(secretFlags(verifySecret), []string{"--headers", headersFile, "--body", bodyFile}),
			[]string{"valid: Standard Webhooks v1 signature, webhook-id msg_1"}},
		{"larger tolerance accepts an old capture", verifyBody,
			joinArgs(secretFlags(verifySecret), standardHeaders(t, "msg_3", old, verifyBody, verifySecret), []string{"--tolerance", "3h"}),
			[]string{"valid: Standard Webhooks v1", "2h0m", "ago"}},
		{"jambonz", verifyBody, joinArgs(secretFlags(verifyJambonzSecret), jambonzHeader(verifyJambonzSecret, sent, verifyBody)),
			[]string{"valid: Jambonz-Signature, sent ", "s ago)"}},
		{"jambonz rotation", verifyBody, joinArgs(secretFlags("old-secret", verifyJambonzSecret), jambonzHeader(verifyJambonzSecret, sent, verifyBody)),
			[]string{"valid: Jambonz-Signature (--secret #2)"}},
		{"both headers: Standard Webhooks is checked", verifyBody,
			joinArgs(secretFlags(verifySecret), std, jambonzHeader(verifyJambonzSecret, sent, verifyBody)), []string{"valid: Standard Webhooks v1"}},
		{"both headers, --scheme jambonz", verifyBody,
			joinArgs(secretFlags(verifyJambonzSecret), std, jambonzHeader(verifyJambonzSecret, sent, verifyBody), []string{"--scheme", "jambonz"}),
			[]string{"valid: Jambonz-Signature"}},
		{"empty body", "", joinArgs(secretFlags(verifySecret), standardHeaders(t, "msg_4", sent, "", verifySecret)),
			[]string{"valid: Standard Webhooks v1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			code, stdout, stderr := verifyCLI(t, tt.stdin, tt.args...)
			wantExit(t, code, exitOK, stdout, stderr)
			if strings.Count(stdout, "\n") != 1 {
				t.Errorf("want one line, got %q", stdout)
			}
			for _, w := range tt.want {
				if !strings.Contains(stdout, w) {
					t.Errorf("output lacks %q: %q", w, stdout)
				}
			}
			assertNoSecret(t, stdout+stderr)
		})
	}
}

func TestVerifyInvalid(t *testing.T) {
	t.Parallel()
	now := time.Now()
	sent := now.Add(-3 * time.Second)
	std := standardHeaders(t, "msg_1", sent, verifyBody, verifySecret)
	changed := strings.Replace(verifyBody, "CA1", "CA2", 1)
	tests := []struct {
		name    string
		stdin   string
		args    []string
		mention string
		hint    string // on stderr; "" means stderr stays empty
	}{
		{"wrong secret", verifyBody, joinArgs(secretFlags(verifyOtherSecret), std), "signature does not match", ""},
		{"body changed by one byte", changed, joinArgs(secretFlags(verifySecret), std), "signature does not match", ""},
		{"trailing newline added by echo", verifyBody + "\n", joinArgs(secretFlags(verifySecret), std), "signature does not match", "ends with a newline"},
		{"timestamp older than the tolerance", verifyBody,
			joinArgs(secretFlags(verifySecret), standardHeaders(t, "msg_2", now.Add(-10*time.Minute), verifyBody, verifySecret)), "too old", "--tolerance is 5m0s"},
		{"timestamp older than a smaller tolerance", verifyBody, joinArgs(secretFlags(verifySecret), std, []string{"--tolerance", "1s"}), "too old", "--tolerance is 1s"},
		{"timestamp in the future", verifyBody,
			joinArgs(secretFlags(verifySecret), standardHeaders(t, "msg_3", now.Add(10*time.Minute), verifyBody, verifySecret)), "too new", "in the future: the sender's clock"},
		{"malformed signature value", verifyBody, joinArgs(secretFlags(verifySecret), std[:4], []string{"-H", "webhook-signature: v1,not-base64"}),
			"malformed webhook header", ""},
		{"v1a header, only a whsec_ key", verifyBody,
			joinArgs(secretFlags(verifySecret), standardHeaders(t, "msg_4", sent, verifyBody, verifySigningKey)), "signature does not match", ""},
		{"jambonz wrong secret", verifyBody, joinArgs(secretFlags("not-the-secret"), jambonzHeader(verifyJambonzSecret, sent, verifyBody)),
			"Jambonz-Signature does not match", ""},
		{"jambonz body changed", changed, joinArgs(secretFlags(verifyJambonzSecret), jambonzHeader(verifyJambonzSecret, sent, verifyBody)),
			"Jambonz-Signature does not match", ""},
		{"jambonz expired", verifyBody, joinArgs(secretFlags(verifyJambonzSecret), jambonzHeader(verifyJambonzSecret, now.Add(-time.Hour), verifyBody)),
			"outside tolerance", "ago, --tolerance is 5m0s"},
		{"jambonz in the future", verifyBody, joinArgs(secretFlags(verifyJambonzSecret), jambonzHeader(verifyJambonzSecret, now.Add(time.Hour), verifyBody)),
			"outside tolerance", "in the future"},
		{"jambonz malformed", verifyBody, joinArgs(secretFlags(verifyJambonzSecret), []string{"-H", "Jambonz-Signature: t=1,v1=zz"}), "malformed", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			code, stdout, stderr := verifyCLI(t, tt.stdin, tt.args...)
			wantExit(t, code, exitFailure, stdout, stderr)
			if !strings.HasPrefix(stdout, "invalid: ") || strings.Count(stdout, "\n") != 1 || !strings.Contains(stdout, tt.mention) {
				t.Errorf("want one line \"invalid: ...%s...\", got %q", tt.mention, stdout)
			}
			if tt.hint == "" && stderr != "" {
				t.Errorf("unwarranted stderr %q", stderr)
			}
			if tt.hint != "" && (!strings.HasPrefix(stderr, "hint: ") || !strings.Contains(stderr, tt.hint)) {
				t.Errorf("stderr lacks the hint %q: %q", tt.hint, stderr)
			}
			assertNoSecret(t, stdout+stderr)
		})
	}
}

func TestVerifyJSON(t *testing.T) {
	t.Parallel()
	sent := time.Unix(time.Now().Unix()-5, 0)
	tests := []struct {
		name  string
		stdin string
		args  []string
		code  int
		want  sigcheck.JSON
	}{
		{"valid, second secret", verifyBody, joinArgs(secretFlags(verifyOtherSecret, verifySecret), standardHeaders(t, "msg_1", sent, verifyBody, verifySecret)), exitOK,
			sigcheck.JSON{Valid: true, Scheme: "standard-webhooks", Version: "v1", WebhookID: "msg_1", MatchedSecret: 2}},
		{"valid v1a", verifyBody, joinArgs(secretFlags(verifyPublicKey), standardHeaders(t, "msg_2", sent, verifyBody, verifySigningKey)), exitOK,
			sigcheck.JSON{Valid: true, Scheme: "standard-webhooks", Version: "v1a", WebhookID: "msg_2", MatchedSecret: 1}},
		{"invalid", verifyBody + "x", joinArgs(secretFlags(verifySecret), standardHeaders(t, "msg_3", sent, verifyBody, verifySecret)), exitFailure,
			sigcheck.JSON{Scheme: "standard-webhooks", WebhookID: "msg_3"}},
		{"jambonz valid", verifyBody, joinArgs(secretFlags(verifyJambonzSecret), jambonzHeader(verifyJambonzSecret, sent, verifyBody)), exitOK,
			sigcheck.JSON{Valid: true, Scheme: "jambonz", MatchedSecret: 1}},
		{"jambonz invalid", verifyBody, joinArgs(secretFlags("nope"), jambonzHeader(verifyJambonzSecret, sent, verifyBody)), exitFailure,
			sigcheck.JSON{Scheme: "jambonz"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			code, stdout, stderr := verifyCLI(t, tt.stdin, append(tt.args, "--json")...)
			wantExit(t, code, tt.code, stdout, stderr)
			got := decodeJSONLine[sigcheck.JSON](t, stdout, "valid", "scheme", "version", "webhook_id", "timestamp", "matched_secret", "error")
			if got.Timestamp != sent.UTC().Format(time.RFC3339) {
				t.Errorf("timestamp %q, want %q", got.Timestamp, sent.UTC().Format(time.RFC3339))
			}
			if (got.Error == "") != tt.want.Valid {
				t.Errorf("valid %v with error %q", got.Valid, got.Error)
			}
			got.Timestamp, got.Error = "", ""
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestVerifyUsage(t *testing.T) {
	t.Parallel()
	sent := time.Now()
	std := standardHeaders(t, "msg_1", sent, verifyBody, verifySecret)
	jam := jambonzHeader(verifyJambonzSecret, sent, verifyBody)
	missing := filepath.Join(t.TempDir(), "absent.json")
	tests := []struct {
		name    string
		args    []string
		mention string
	}{
		{"no --secret", std, "--secret is required"},
		{"empty --secret", joinArgs(secretFlags(""), std), "--secret #1 is empty"},
		{"whsk_ private key", joinArgs(secretFlags(verifySigningKey), std), "private signing key"},
		{"garbage key", joinArgs(secretFlags("garbage"), std), "--secret #1 is neither"},
		{"plain secret beside a Jambonz-Signature", joinArgs(secretFlags(verifyJambonzSecret), std, jam), "--scheme jambonz"},
		{"bad second key", joinArgs(secretFlags(verifySecret, "whsec_AAAA"), std), "--secret #2: webhooksig: malformed secret"},
		{"bad public key", joinArgs(secretFlags("whpk_!!"), std), "--secret #1: webhooksig: malformed secret"},
		{"-H without colon", joinArgs(secretFlags(verifySecret), std, []string{"-H", "webhook-id msg_1"}), "want 'Name: value'"},
		{"-H with a bad name", joinArgs(secretFlags(verifySecret), std, []string{"-H", "webhook id: msg_1"}), "not a header name"},
		{"no signature header", joinArgs(secretFlags(verifySecret), std[:4]), "no webhook-signature or Jambonz-Signature header given (headers given: Webhook-Id, Webhook-Timestamp)"},
		{"no header at all", secretFlags(verifySecret), "headers given: none"},
		{"webhook-id missing", joinArgs(secretFlags(verifySecret), std[2:]), "missing webhook headers"},
		{"negative tolerance", joinArgs(secretFlags(verifySecret), std, []string{"--tolerance", "-1s"}), "--tolerance=-1s"},
		{"zero tolerance", joinArgs(secretFlags(verifySecret), std, []string{"--tolerance=0"}), "positive"},
		{"tolerance not a duration", joinArgs(secretFlags(verifySecret), std, []string{"--tolerance", "abc"}), `"abc" for "--tolerance"`},
		{"missing body file", joinArgs(secretFlags(verifySecret), std, []string{"--body", missing}), "--body: open " + missing},
		{"missing headers file", joinArgs(secretFlags(verifySecret), []string{"--headers", missing}), "--headers: open " + missing},
		{"bad headers file line", joinArgs(secretFlags(verifySecret), []string{"--headers", writeVerifyFile(t, "h.txt", "webhook-id: x\nno colon here\n")}), "line 2"},
		{"unknown scheme", joinArgs(secretFlags(verifySecret), std, []string{"--scheme", "hmac"}), `--scheme="hmac"`},
		{"scheme without its header", joinArgs(secretFlags(verifyJambonzSecret), std, []string{"--scheme", "jambonz"}), "no Jambonz-Signature header"},
		{"positional argument", joinArgs(secretFlags(verifySecret), std, []string{"body.json"}), "body.json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			code, stdout, stderr := verifyCLI(t, verifyBody, tt.args...)
			wantExit(t, code, exitUsage, stdout, stderr)
			if stdout != "" {
				t.Errorf("nothing may be printed on stdout, got %q", stdout)
			}
			if strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.Contains(stderr, tt.mention) {
				t.Errorf("want a one-line error mentioning %q, got %q", tt.mention, stderr)
			}
			assertNoSecret(t, stderr)
		})
	}
}
