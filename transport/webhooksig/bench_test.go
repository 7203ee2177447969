package webhooksig_test

import (
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/internal/testkit"
	"github.com/switchboard-voice/switchboard/transport/webhooksig"
)

// benchBody is a typical call-status event (about 1 KiB).
var benchBody = []byte(`{"type":"call.status","timestamp":"2026-11-29T19:00:00Z","data":{` +
	strings.Repeat(`"k":"call-status-value-0123456789",`, 28) + `"end":true}}`)

// The baselines are the bare primitives producing the same header text; the ratio of
// each BenchmarkSign* to its baseline is the cost of our API around them.
func BenchmarkSign(b *testing.B) {
	ts := time.Unix(1_800_000_000, 0)
	secret, _ := webhooksig.ParseSecret(vectorSecret)
	rawSecret, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(vectorSecret, "whsec_"))
	seed, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(vectorSigningKey, "whsk_"))
	priv := ed25519.NewKeyFromSeed(seed)
	sk, _ := webhooksig.ParseSigningKey(vectorSigningKey)

	ours := func(s *webhooksig.Signer) func(*testing.B) {
		return func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.Sign("evt_1", ts, benchBody); err != nil {
					b.Fatal(err)
				}
			}
		}
	}

	b.Run("v1/ours", ours(&webhooksig.Signer{Secrets: []webhooksig.Secret{secret}}))
	b.Run("v1/baseline", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			h := hmac.New(sha256.New, rawSecret)
			fmt.Fprintf(h, "%s.%d.", "evt_1", ts.Unix())
			h.Write(benchBody)
			_ = "v1," + base64.StdEncoding.EncodeToString(h.Sum(nil))
		}
	})
	b.Run("v1a/ours", ours(&webhooksig.Signer{SigningKeys: []webhooksig.SigningKey{sk}}))
	b.Run("v1a/baseline", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			msg := fmt.Appendf(nil, "%s.%d.%s", "evt_1", ts.Unix(), benchBody)
			_ = "v1a," + base64.StdEncoding.EncodeToString(ed25519.Sign(priv, msg))
		}
	})
}

func BenchmarkVerify(b *testing.B) {
	ts := time.Unix(1_800_000_000, 0)
	s, _ := webhooksig.NewSigner(vectorSecret)
	h, _ := s.Headers("evt_1", ts, benchBody)
	v, _ := webhooksig.NewVerifier(vectorSecret)
	v.Clock = testkit.NewClockAt(ts)

	b.Run("v1/ours", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := v.Verify(h, benchBody); err != nil {
				b.Fatal(err)
			}
		}
	})
	// The baseline is the reference library's algorithm on the same headers.
	b.Run("v1/baseline", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := referenceVerifyV1(vectorSecret, h, benchBody, ts); err != nil {
				b.Fatal(err)
			}
		}
	})
}
