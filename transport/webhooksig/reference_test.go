package webhooksig_test

import (
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Published test vectors of the Standard Webhooks project. The spec
// (spec/standard-webhooks.md) shows only signature formats without their keys, so the
// vectors are the ones the official Go library checks its output against
// (libraries/go/webhook_test.go TestWebhookSign and webhook_asymmetric_test.go
// TestAsymmetricWebhookSign in github.com/standard-webhooks/standard-webhooks).
const (
	vectorID        = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	vectorTimestamp = 1614265330
	vectorBody      = `{"test": 2432232314}`

	vectorSecret       = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	vectorSignatureV1  = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
	vectorSigningKey   = "whsk_VEVTVFNJR05JTkdLRVlET05PVFVTRVRISVNGT1JBTlk=" // seed "TESTSIGNINGKEYDONOTUSETHISFORANY"
	vectorSignatureV1a = "v1a,tQ9V2XOqn7jL/DQenEFpqIugdBVtiMmER5mhSkXBNwM0mkATuDe6KYYUuxqtaiHeYGb7KaaBRdM5WqyeFiL8Ag=="
)

// The reference verifier below is a port of the official Go library's algorithm
// (libraries/go webhook.go, webhook_symmetric.go, webhook_asymmetric.go), written
// independently of the package under test so that agreement means interoperability:
// headers read with Get, timestamp by strconv.ParseInt, tolerance of 5 minutes,
// content by fmt "%s.%d.%s", the header split on " " then on ",", v1 compared as
// base64 text with hmac.Equal, v1a decoded and checked with ed25519.Verify.

const referenceTolerance = 5 * time.Minute

var errReference = errors.New("reference verifier refused")

func referenceCheckHeaders(h http.Header, now time.Time) (id, sigs string, ts time.Time, err error) {
	id, sigs, tsText := h.Get("webhook-id"), h.Get("webhook-signature"), h.Get("webhook-timestamp")
	if id == "" || sigs == "" || tsText == "" {
		return "", "", time.Time{}, fmt.Errorf("%w: missing required headers", errReference)
	}
	unix, err := strconv.ParseInt(tsText, 10, 64)
	if err != nil {
		return "", "", time.Time{}, fmt.Errorf("%w: invalid timestamp", errReference)
	}
	ts = time.Unix(unix, 0)
	if now.Sub(ts) > referenceTolerance {
		return "", "", time.Time{}, fmt.Errorf("%w: message timestamp too old", errReference)
	}
	if ts.After(now.Add(referenceTolerance)) {
		return "", "", time.Time{}, fmt.Errorf("%w: message timestamp too new", errReference)
	}
	return id, sigs, ts, nil
}

func referenceMatch(sigs, version string, check func(sig []byte) bool) error {
	for _, versioned := range strings.Split(sigs, " ") {
		parts := strings.Split(versioned, ",")
		if len(parts) < 2 || parts[0] != version {
			continue
		}
		if check([]byte(parts[1])) {
			return nil
		}
	}
	return fmt.Errorf("%w: no matching signature found", errReference)
}

// referenceSignV1 signs like the official library: secret with an optional whsec_
// prefix, base64-decoded, HMAC-SHA256 over "%s.%d.%s".
func referenceSignV1(secret, id string, ts time.Time, body []byte) string {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		panic(err)
	}
	h := hmac.New(sha256.New, key)
	h.Write([]byte(fmt.Sprintf("%s.%d.%s", id, ts.Unix(), body)))
	return "v1," + base64.StdEncoding.EncodeToString(h.Sum(nil))
}

// referenceSignV1a signs like the official library: the whsk_ value is the ed25519 seed.
func referenceSignV1a(signingKey, id string, ts time.Time, body []byte) string {
	seed, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(signingKey, "whsk_"))
	if err != nil {
		panic(err)
	}
	sig := ed25519.Sign(ed25519.NewKeyFromSeed(seed), []byte(fmt.Sprintf("%s.%d.%s", id, ts.Unix(), body)))
	return "v1a," + base64.StdEncoding.EncodeToString(sig)
}

func referenceVerifyV1(secret string, h http.Header, body []byte, now time.Time) error {
	id, sigs, ts, err := referenceCheckHeaders(h, now)
	if err != nil {
		return err
	}
	expected := []byte(strings.Split(referenceSignV1(secret, id, ts, body), ",")[1])
	return referenceMatch(sigs, "v1", func(sig []byte) bool { return hmac.Equal(sig, expected) })
}

func referenceVerifyV1a(publicKey string, h http.Header, body []byte, now time.Time) error {
	pub, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(publicKey, "whpk_"))
	if err != nil {
		return err
	}
	id, sigs, ts, err := referenceCheckHeaders(h, now)
	if err != nil {
		return err
	}
	msg := []byte(fmt.Sprintf("%s.%d.%s", id, ts.Unix(), body))
	return referenceMatch(sigs, "v1a", func(b64 []byte) bool {
		sig := make([]byte, base64.StdEncoding.DecodedLen(len(b64)))
		n, err := base64.StdEncoding.Decode(sig, b64)
		if err != nil {
			return false
		}
		return ed25519.Verify(ed25519.PublicKey(pub), msg, sig[:n])
	})
}

// referenceHeaders builds the three headers the way the official library's tests do.
func referenceHeaders(id string, ts time.Time, signature string) http.Header {
	h := http.Header{}
	h.Set("webhook-id", id)
	h.Set("webhook-signature", signature)
	h.Set("webhook-timestamp", fmt.Sprint(ts.Unix()))
	return h
}
