package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// FuzzVerify feeds arbitrary header lines and bodies, as a pasted request would carry
// them, to `switchboard verify`: it never panics, exits 0, 1 or 2, prints a verdict
// only when it verified (0 or 1), and never prints the secrets.
func FuzzVerify(f *testing.F) {
	const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	f.Add("webhook-id: msg_1", "webhook-timestamp: 1795986000", "webhook-signature: v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=", []byte(`{"a":1}`))
	f.Add("Jambonz-Signature: t=1795986000,v1=00", "X: y", "", []byte{})
	f.Add("webhook-id: a.b", "webhook-timestamp: 99999999999999999999", "webhook-signature: v1a,@@", []byte("\n"))
	f.Add("no colon", "", "", []byte(nil))
	f.Fuzz(func(t *testing.T, h1, h2, h3 string, body []byte) {
		args := []string{"verify", "--secret", secret, "--secret", "plain-jambonz-secret"}
		for _, h := range []string{h1, h2, h3} {
			if h != "" {
				args = append(args, "-H", h)
			}
		}
		var out, errOut bytes.Buffer
		code := run(context.Background(), args, bytes.NewReader(body), &out, &errOut, func(string) string { return "" })
		switch code {
		case exitOK, exitFailure:
			if !strings.HasPrefix(out.String(), "valid") && !strings.HasPrefix(out.String(), "invalid") {
				t.Fatalf("exit %d without a verdict: %q", code, out.String())
			}
		case exitUsage:
			if out.Len() != 0 {
				t.Fatalf("usage error printed on stdout: %q", out.String())
			}
		default:
			t.Fatalf("exit %d", code)
		}
		for _, s := range []string{secret, "plain-jambonz-secret"} {
			echoed := strings.Contains(h1+h2+h3+string(body), s) // the input itself carried it
			if !echoed && strings.Contains(out.String()+errOut.String(), s) {
				t.Fatal("a secret was printed")
			}
		}
	})
}
