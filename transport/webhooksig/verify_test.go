package webhooksig_test

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/internal/testkit"
	"github.com/switchboard-voice/switchboard/transport/webhooksig"
)

func mustVerifier(t testing.TB, now time.Time, encoded ...string) *webhooksig.Verifier {
	t.Helper()
	v, err := webhooksig.NewVerifier(encoded...)
	if err != nil {
		t.Fatalf("NewVerifier: %v", err)
	}
	v.Clock = testkit.NewClockAt(now)
	return v
}

func publicOf(t testing.TB, signingKey string) string {
	t.Helper()
	k, err := webhooksig.ParseSigningKey(signingKey)
	if err != nil {
		t.Fatal(err)
	}
	return k.Public().Encode()
}

// The published vectors, received as headers, verify with our Verifier at their time.
func TestVerifyPublishedVectors(t *testing.T) {
	t.Parallel()
	ts := time.Unix(vectorTimestamp, 0)
	for _, tc := range []struct{ name, key, sig string }{
		{"v1", vectorSecret, vectorSignatureV1},
		{"v1a", publicOf(t, vectorSigningKey), vectorSignatureV1a},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := referenceHeaders(vectorID, ts, tc.sig)
			if err := mustVerifier(t, ts, tc.key).Verify(h, []byte(vectorBody)); err != nil {
				t.Fatalf("Verify: %v", err)
			}
			if err := mustVerifier(t, ts, tc.key).Verify(h, []byte(vectorBody+" ")); !errors.Is(err, webhooksig.ErrInvalidSignature) {
				t.Fatalf("Verify of an altered vector body = %v, want ErrInvalidSignature", err)
			}
		})
	}
}

// Our output passes the reference verifier, and the reference output passes ours.
func TestInteroperatesWithReferenceAlgorithm(t *testing.T) {
	t.Parallel()
	now := time.Now()
	body := []byte(`{"type":"call.status","data":{"callSid":"c-1","status":"completed"}}`)
	secrets := []string{vectorSecret, newSecret(t)}
	sk, pk := newKeyPair(t)

	for _, secret := range secrets {
		h, err := mustSigner(t, secret).Headers("evt_2KWPBgLlAfxdpx2AI54pPJ85f4W", now, body)
		if err != nil {
			t.Fatal(err)
		}
		if err := referenceVerifyV1(secret, h, body, now); err != nil {
			t.Errorf("reference verifier refuses our v1 output: %v", err)
		}
		if err := referenceVerifyV1(secret, h, append(body, '\n'), now); err == nil {
			t.Error("reference verifier accepts our v1 output for another body: the port is broken")
		}
		ref := referenceHeaders("evt_ref", now, referenceSignV1(secret, "evt_ref", now, body))
		if err := mustVerifier(t, now, secret).Verify(ref, body); err != nil {
			t.Errorf("our verifier refuses reference v1 output: %v", err)
		}
	}

	// Rotation with both schemes: the reference verifier picks its entry from the list.
	h, err := mustSigner(t, secrets[1], secrets[0], sk).Headers("evt_rot", now, body)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range secrets {
		if err := referenceVerifyV1(secret, h, body, now); err != nil {
			t.Errorf("reference verifier refuses our rotation header for one secret: %v", err)
		}
	}
	if err := referenceVerifyV1a(pk, h, body, now); err != nil {
		t.Errorf("reference verifier refuses our v1a output: %v", err)
	}
	ref := referenceHeaders("evt_ref", now, referenceSignV1a(sk, "evt_ref", now, body))
	if err := mustVerifier(t, now, pk).Verify(ref, body); err != nil {
		t.Errorf("our verifier refuses reference v1a output: %v", err)
	}
}

func TestVerifyRoundTrip(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_800_000_000, 0)
	sk, pk := newKeyPair(t)
	secret := newSecret(t)
	for _, tc := range []struct {
		name     string
		signWith []string
		verify   []string
	}{
		{"v1", []string{secret}, []string{secret}},
		{"v1a", []string{sk}, []string{pk}},
		{"v1 and v1a, verifier trusts v1a only", []string{secret, sk}, []string{pk}},
		{"v1 and v1a, verifier trusts v1 only", []string{secret, sk}, []string{secret}},
		{"empty body", []string{secret}, []string{secret}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := []byte(`{"n":1}`)
			if tc.name == "empty body" {
				body = nil
			}
			h, err := mustSigner(t, tc.signWith...).Headers("msg_1", now, body)
			if err != nil {
				t.Fatal(err)
			}
			if err := mustVerifier(t, now, tc.verify...).Verify(h, body); err != nil {
				t.Fatalf("Verify: %v", err)
			}
		})
	}
}

// During rotation the sender signs with old and new key; a receiver holding either
// one, or both, accepts; a receiver holding neither refuses.
func TestVerifyDuringKeyRotation(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_800_000_000, 0)
	oldKey, newKey, other := newSecret(t), newSecret(t), newSecret(t)
	oldSK, _ := newKeyPair(t)
	oldPK := publicOf(t, oldSK)
	body := []byte(`{}`)
	both, err := mustSigner(t, newKey, oldKey, oldSK).Headers("msg_rot", now, body)
	if err != nil {
		t.Fatal(err)
	}
	onlyNew, err := mustSigner(t, newKey).Headers("msg_rot", now, body)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		h       http.Header
		trusted []string
		want    error
	}{
		{"receiver still on the old secret", both, []string{oldKey}, nil},
		{"receiver already on the new secret", both, []string{newKey}, nil},
		{"receiver on the old public key", both, []string{oldPK}, nil},
		{"receiver trusting both gets the new-only header", onlyNew, []string{oldKey, newKey}, nil},
		{"receiver trusting an unrelated secret", both, []string{other}, webhooksig.ErrInvalidSignature},
		{"old receiver after the grace period", onlyNew, []string{oldKey, oldPK}, webhooksig.ErrInvalidSignature},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := mustVerifier(t, now, tc.trusted...).Verify(tc.h, body); !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
				t.Fatalf("Verify = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestVerifyRefuses(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_800_000_000, 0)
	secret, otherSecret := newSecret(t), newSecret(t)
	sk, pk := newKeyPair(t)
	_, otherPK := newKeyPair(t)
	body := []byte(`{"type":"call.status"}`)
	sign := func(keys []string, id string, ts time.Time) http.Header {
		h, err := mustSigner(t, keys...).Headers(id, ts, body)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	good := func() http.Header { return sign([]string{secret, sk}, "msg_1", now) }
	with := func(h http.Header, name, value string) http.Header {
		if value == "" {
			h.Del(name)
		} else {
			h.Set(name, value)
		}
		return h
	}
	tolerance := webhooksig.DefaultTolerance

	for _, tc := range []struct {
		name    string
		h       http.Header
		body    []byte
		trusted []string
		want    error
	}{
		{"tampered body", good(), []byte(`{"type":"call.status "}`), nil, webhooksig.ErrInvalidSignature},
		{"truncated body", good(), body[:len(body)-1], nil, webhooksig.ErrInvalidSignature},
		{"other id", with(good(), "webhook-id", "msg_2"), body, nil, webhooksig.ErrInvalidSignature},
		{"other timestamp within tolerance", with(good(), "webhook-timestamp", strconv.FormatInt(now.Unix()-1, 10)), body, nil, webhooksig.ErrInvalidSignature},
		{"wrong secret", good(), body, []string{otherSecret}, webhooksig.ErrInvalidSignature},
		{"wrong public key", good(), body, []string{otherPK}, webhooksig.ErrInvalidSignature},
		{"v1 signature relabelled v1a", with(good(), "webhook-signature", strings.Replace(sign([]string{secret}, "msg_1", now).Get("webhook-signature"), "v1,", "v1a,", 1)), body, []string{pk}, webhooksig.ErrMalformedHeader},
		{"v1a signature relabelled v1", with(good(), "webhook-signature", strings.Replace(sign([]string{sk}, "msg_1", now).Get("webhook-signature"), "v1a,", "v1,", 1)), body, nil, webhooksig.ErrMalformedHeader},
		{"only an unknown version", with(good(), "webhook-signature", "v2,"+b64(32, 3)), body, nil, webhooksig.ErrInvalidSignature},
		{"1 s too old", sign([]string{secret}, "msg_1", now.Add(-tolerance-time.Second)), body, nil, webhooksig.ErrTimestampTooOld},
		{"a day old", sign([]string{secret}, "msg_1", now.Add(-24*time.Hour)), body, nil, webhooksig.ErrTimestampTooOld},
		{"1 s too new", sign([]string{secret}, "msg_1", now.Add(tolerance+time.Second)), body, nil, webhooksig.ErrTimestampTooNew},
		{"far future", sign([]string{secret}, "msg_1", now.Add(1000*time.Hour)), body, nil, webhooksig.ErrTimestampTooNew},
		{"timestamp 0", with(good(), "webhook-timestamp", "0"), body, nil, webhooksig.ErrTimestampTooOld},
		{"timestamp max int64", with(good(), "webhook-timestamp", "9223372036854775807"), body, nil, webhooksig.ErrTimestampTooNew},
		{"missing id", with(good(), "webhook-id", ""), body, nil, webhooksig.ErrMissingHeaders},
		{"missing timestamp", with(good(), "webhook-timestamp", ""), body, nil, webhooksig.ErrMissingHeaders},
		{"missing signature", with(good(), "webhook-signature", ""), body, nil, webhooksig.ErrMissingHeaders},
		{"no headers", http.Header{}, body, nil, webhooksig.ErrMissingHeaders},
		{"signed timestamp", with(good(), "webhook-timestamp", "+"+strconv.FormatInt(now.Unix(), 10)), body, nil, webhooksig.ErrMalformedHeader},
		{"zero-padded timestamp", with(good(), "webhook-timestamp", "0"+strconv.FormatInt(now.Unix(), 10)), body, nil, webhooksig.ErrMalformedHeader},
		{"negative timestamp", with(good(), "webhook-timestamp", "-1"), body, nil, webhooksig.ErrMalformedHeader},
		{"timestamp just past int64", with(good(), "webhook-timestamp", "9223372036854775808"), body, nil, webhooksig.ErrMalformedHeader},
		{"timestamp in milliseconds overflowing", with(good(), "webhook-timestamp", "18000000000000000000"), body, nil, webhooksig.ErrMalformedHeader},
		{"timestamp as a date", with(good(), "webhook-timestamp", now.Format(time.RFC3339)), body, nil, webhooksig.ErrMalformedHeader},
		{"fractional timestamp", with(good(), "webhook-timestamp", strconv.FormatInt(now.Unix(), 10)+".5"), body, nil, webhooksig.ErrMalformedHeader},
		{"id with a full stop", with(good(), "webhook-id", "msg.1"), body, nil, webhooksig.ErrMalformedHeader},
		{"garbage signature header", with(good(), "webhook-signature", "sha256=deadbeef"), body, nil, webhooksig.ErrMalformedHeader},
	} {
		t.Run(tc.name, func(t *testing.T) {
			trusted := tc.trusted
			if trusted == nil {
				trusted = []string{secret, pk}
			}
			err := mustVerifier(t, now, trusted...).Verify(tc.h, tc.body)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Verify = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestVerifyToleranceBoundaries(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_800_000_000, 0)
	secret := newSecret(t)
	body := []byte(`{}`)
	for _, tc := range []struct {
		name      string
		tolerance time.Duration
		offset    time.Duration // timestamp minus clock
		want      error
	}{
		{"default: exactly 300 s old passes", 0, -300 * time.Second, nil},
		{"default: 301 s old fails", 0, -301 * time.Second, webhooksig.ErrTimestampTooOld},
		{"default: exactly 300 s ahead passes", 0, 300 * time.Second, nil},
		{"default: 301 s ahead fails", 0, 301 * time.Second, webhooksig.ErrTimestampTooNew},
		{"negative tolerance means default", -time.Second, -300 * time.Second, nil},
		{"10 s: 11 s old fails", 10 * time.Second, -11 * time.Second, webhooksig.ErrTimestampTooOld},
		{"10 s: 11 s ahead fails", 10 * time.Second, 11 * time.Second, webhooksig.ErrTimestampTooNew},
		{"10 s: 10 s old passes", 10 * time.Second, -10 * time.Second, nil},
		{"1 h: 59 min old passes", time.Hour, -59 * time.Minute, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, err := mustSigner(t, secret).Headers("msg_t", now.Add(tc.offset), body)
			if err != nil {
				t.Fatal(err)
			}
			v := mustVerifier(t, now, secret)
			v.Tolerance = tc.tolerance
			err = v.Verify(h, body)
			if !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
				t.Fatalf("Verify = %v, want %v", err, tc.want)
			}
		})
	}
}

// A sub-second clock does not shift the boundary: the header has whole seconds.
// Distances beyond what a time.Duration holds still compare correctly.
func TestVerifyHugeDistances(t *testing.T) {
	t.Parallel()
	h := referenceHeaders(vectorID, time.Unix(0, 0), vectorSignatureV1)
	farFuture := time.Unix(1<<40, 0) // ~ year 36812: 10^12 s after the epoch
	if err := mustVerifier(t, farFuture, vectorSecret).Verify(h, []byte(vectorBody)); !errors.Is(err, webhooksig.ErrTimestampTooOld) {
		t.Fatalf("epoch timestamp against a far-future clock: %v, want ErrTimestampTooOld", err)
	}
	h.Set("webhook-timestamp", "9223372036854775807")
	if err := mustVerifier(t, time.Unix(0, 0), vectorSecret).Verify(h, []byte(vectorBody)); !errors.Is(err, webhooksig.ErrTimestampTooNew) {
		t.Fatalf("max timestamp against the epoch: %v, want ErrTimestampTooNew", err)
	}
}

func TestVerifyToleranceWithSubSecondClock(t *testing.T) {
	t.Parallel()
	secret := newSecret(t)
	ts := time.Unix(1_800_000_000, 0)
	h, err := mustSigner(t, secret).Headers("msg_t", ts, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := mustVerifier(t, ts.Add(300*time.Second), secret).Verify(h, nil); err != nil {
		t.Fatalf("at exactly the tolerance: %v", err)
	}
	if err := mustVerifier(t, ts.Add(300*time.Second+time.Millisecond), secret).Verify(h, nil); !errors.Is(err, webhooksig.ErrTimestampTooOld) {
		t.Fatalf("1 ms past the tolerance: %v, want ErrTimestampTooOld", err)
	}
}

func TestVerifierConfigurationErrors(t *testing.T) {
	t.Parallel()
	now := time.Unix(vectorTimestamp, 0)
	h := referenceHeaders(vectorID, now, vectorSignatureV1+" "+vectorSignatureV1a)
	for _, tc := range []struct {
		name string
		v    *webhooksig.Verifier
	}{
		{"no keys", &webhooksig.Verifier{Clock: testkit.NewClockAt(now)}},
		// An empty HMAC key would let anyone sign; a zero public key would panic.
		{"zero Secret", &webhooksig.Verifier{Secrets: []webhooksig.Secret{{}}, Clock: testkit.NewClockAt(now)}},
		{"zero PublicKey", &webhooksig.Verifier{PublicKeys: []webhooksig.PublicKey{{}}, Clock: testkit.NewClockAt(now)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.v.Verify(h, []byte(vectorBody)); !errors.Is(err, webhooksig.ErrNoKeys) {
				t.Fatalf("Verify = %v, want ErrNoKeys", err)
			}
		})
	}

	_, pk := newKeyPair(t)
	sk, _ := newKeyPair(t)
	for _, tc := range []struct {
		name string
		keys []string
		want error
	}{
		{"nothing", nil, webhooksig.ErrNoKeys},
		{"a private key", []string{sk}, webhooksig.ErrMalformedSecret},
		{"bad public key after a good one", []string{pk, "whpk_AAAA"}, webhooksig.ErrMalformedSecret},
		{"bad secret", []string{"whsec_AAAA"}, webhooksig.ErrMalformedSecret},
		{"unprefixed", []string{"MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}, webhooksig.ErrMalformedSecret},
	} {
		t.Run("NewVerifier "+tc.name, func(t *testing.T) {
			if v, err := webhooksig.NewVerifier(tc.keys...); !errors.Is(err, tc.want) || v != nil {
				t.Fatalf("NewVerifier = %v, %v; want nil, %v", v, err, tc.want)
			}
		})
	}
}

func TestVerifyUsesTheWallClockByDefault(t *testing.T) {
	t.Parallel()
	v, err := webhooksig.NewVerifier(vectorSecret)
	if err != nil {
		t.Fatal(err)
	}
	// The vector dates from 2021: far outside any tolerance of the real clock.
	h := referenceHeaders(vectorID, time.Unix(vectorTimestamp, 0), vectorSignatureV1)
	if err := v.Verify(h, []byte(vectorBody)); !errors.Is(err, webhooksig.ErrTimestampTooOld) {
		t.Fatalf("Verify = %v, want ErrTimestampTooOld", err)
	}
	fresh, err := mustSigner(t, vectorSecret).Headers(vectorID, time.Now(), []byte(vectorBody))
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Verify(fresh, []byte(vectorBody)); err != nil {
		t.Fatalf("Verify of a fresh message: %v", err)
	}
}

// Headers built as a map literal keep their lower-case names; Verify still finds them.
func TestVerifyFindsNonCanonicalHeaderKeys(t *testing.T) {
	t.Parallel()
	ts := time.Unix(vectorTimestamp, 0)
	h := http.Header{
		"webhook-id":        {vectorID},
		"webhook-timestamp": {strconv.Itoa(vectorTimestamp)},
		"webhook-signature": {vectorSignatureV1},
	}
	if err := mustVerifier(t, ts, vectorSecret).Verify(h, []byte(vectorBody)); err != nil {
		t.Fatalf("Verify: %v", err)
	}
}

// A v1a signature is checked against every trusted public key, not only the first.
func TestVerifyTriesEveryPublicKey(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_800_000_000, 0)
	sk, pk := newKeyPair(t)
	_, first := newKeyPair(t)
	h, err := mustSigner(t, sk).Headers("msg_k", now, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := mustVerifier(t, now, first, pk).Verify(h, nil); err != nil {
		t.Fatalf("Verify: %v", err)
	}
	// The signature really is ed25519 over the spec's content.
	sigs, err := webhooksig.ParseSignatureHeader(h.Get("webhook-signature"))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(pk, "whpk_"))
	if err != nil {
		t.Fatal(err)
	}
	if !ed25519.Verify(ed25519.PublicKey(raw), []byte("msg_k.1800000000."), sigs[0].Value) {
		t.Fatal("v1a signature is not ed25519 over \"msg_k.1800000000.\"")
	}
}

// End to end over loopback HTTP: the headers survive a real request, and the receiver
// verifies the body it read.
func TestVerifyOverHTTP(t *testing.T) {
	t.Parallel()
	secret := newSecret(t)
	signer := mustSigner(t, secret)
	verifier := mustVerifier(t, time.Now(), secret)
	verifier.Clock = nil // wall clock on both ends

	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		if err := verifier.Verify(r.Header, body); err != nil {
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()

	post := func(body []byte, h http.Header) (int, string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, srv.URL, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		for k, vs := range h {
			req.Header[k] = vs
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		msg, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(msg)
	}

	body := []byte(`{"type":"settings.webhook.ping","data":{}}`)
	h, err := signer.Headers("evt_ping_1", time.Now(), body)
	if err != nil {
		t.Fatal(err)
	}
	if code, msg := post(body, h); code != http.StatusNoContent {
		t.Fatalf("signed request answered %d %q, want 204", code, msg)
	}
	if code, msg := post([]byte(`{"type":"settings.webhook.ping","data":{"x":1}}`), h); code != http.StatusUnauthorized || !strings.Contains(msg, "no matching signature") {
		t.Fatalf("tampered request answered %d %q, want 401 no matching signature", code, msg)
	}
}
