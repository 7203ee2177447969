package transport_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/transport"
)

// Vectors computed independently (Python's hmac module) for secret
// "my-webhook-secret" at t=1700000000.
const (
	vecSecret = "my-webhook-secret"
	vecBody   = `{"call_sid":"abc"}`
	vecSig    = "t=1700000000,v1=00e6e485c7cef28f1f1d5f8a26eb7fde2bb7e9157b273c902e337de64772b90f"
	vecEmpty  = "t=1700000000,v1=cdc7783479751cf0c0f1de346c260166c521a945d9cc87ab123942d9321ebd67"
)

var vecTime = time.Unix(1_700_000_000, 0)

func TestSignJambonzVectors(t *testing.T) {
	t.Parallel()
	if got := transport.SignJambonz(vecSecret, vecTime, []byte(vecBody)); got != vecSig {
		t.Errorf("SignJambonz = %s, want %s", got, vecSig)
	}
	if got := transport.SignJambonz(vecSecret, vecTime.Add(900*time.Millisecond), nil); got != vecEmpty {
		t.Errorf("SignJambonz(empty) = %s, want %s", got, vecEmpty)
	}
}

func TestVerifyJambonz(t *testing.T) {
	t.Parallel()
	body := []byte(vecBody)
	other := "t=1700000000,v1=" + strings.Repeat("ab", 32)
	rows := []struct {
		name      string
		secret    string
		header    string
		body      []byte
		now       time.Time
		tolerance time.Duration
		want      error
	}{
		{"valid", vecSecret, vecSig, body, vecTime, 0, nil},
		{"valid with spaces", vecSecret, " t=1700000000 , v1=00e6e485c7cef28f1f1d5f8a26eb7fde2bb7e9157b273c902e337de64772b90f ", body, vecTime, 0, nil},
		{"valid among several v1 (rotation)", vecSecret, other + strings.TrimPrefix(vecSig, "t=1700000000"), body, vecTime, 0, nil},
		{"unknown scheme ignored", vecSecret, vecSig + ",v0=zz", body, vecTime, 0, nil},
		{"at the tolerance edge", vecSecret, vecSig, body, vecTime.Add(300 * time.Second), 0, nil},
		{"tampered body", vecSecret, vecSig, []byte(`{"call_sid":"abd"}`), vecTime, 0, transport.ErrSignatureMismatch},
		{"wrong secret", "other", vecSig, body, vecTime, 0, transport.ErrSignatureMismatch},
		{"too old", vecSecret, vecSig, body, vecTime.Add(301 * time.Second), 0, transport.ErrSignatureExpired},
		{"from the future", vecSecret, vecSig, body, vecTime.Add(-11 * time.Second), 10 * time.Second, transport.ErrSignatureExpired},
		{"tampered timestamp", vecSecret, strings.Replace(vecSig, "t=1700000000", "t=1700000001", 1), body, vecTime, 0, transport.ErrSignatureMismatch},
		{"empty", vecSecret, "", body, vecTime, 0, transport.ErrSignatureMalformed},
		{"no t", vecSecret, strings.TrimPrefix(vecSig, "t=1700000000,"), body, vecTime, 0, transport.ErrSignatureMalformed},
		{"no v1", vecSecret, "t=1700000000", body, vecTime, 0, transport.ErrSignatureMalformed},
		{"two t", vecSecret, "t=1," + vecSig, body, vecTime, 0, transport.ErrSignatureMalformed},
		{"negative t", vecSecret, "t=-1,v1=" + strings.Repeat("00", 32), body, vecTime, 0, transport.ErrSignatureMalformed},
		{"short v1", vecSecret, "t=1700000000,v1=abcd", body, vecTime, 0, transport.ErrSignatureMalformed},
		{"non-hex v1", vecSecret, "t=1700000000,v1=" + strings.Repeat("zz", 32), body, vecTime, 0, transport.ErrSignatureMalformed},
		{"item without =", vecSecret, vecSig + ",junk", body, vecTime, 0, transport.ErrSignatureMalformed},
		{"huge t", vecSecret, "t=99999999999999999999,v1=" + strings.Repeat("00", 32), body, vecTime, 0, transport.ErrSignatureMalformed},
		{"too many v1", vecSecret, "t=1700000000" + strings.Repeat(",v1="+strings.Repeat("00", 32), 9), body, vecTime, 0, transport.ErrSignatureMalformed},
	}
	for _, r := range rows {
		err := transport.VerifyJambonz(r.secret, r.header, r.body, r.now, r.tolerance)
		if r.want == nil && err != nil || r.want != nil && !errors.Is(err, r.want) {
			t.Errorf("%s: VerifyJambonz = %v, want %v", r.name, err, r.want)
		}
	}
}

func FuzzVerifyJambonz(f *testing.F) {
	f.Add(vecSig, []byte(vecBody))
	f.Add(vecEmpty, []byte{})
	f.Add("t=,v1=", []byte("x"))
	f.Add("t=1700000000,v1=00,v1=zz,=,,", []byte("x"))
	f.Add("v1=t=1700000000", []byte(nil))
	f.Fuzz(func(t *testing.T, header string, body []byte) {
		err := transport.VerifyJambonz(vecSecret, header, body, vecTime, time.Hour)
		if err != nil && !errors.Is(err, transport.ErrSignatureMalformed) &&
			!errors.Is(err, transport.ErrSignatureExpired) && !errors.Is(err, transport.ErrSignatureMismatch) {
			t.Fatalf("unexpected error kind: %v", err)
		}
		// Round trip: what we sign always verifies, and never for another body.
		sig := transport.SignJambonz(vecSecret, vecTime, body)
		if err := transport.VerifyJambonz(vecSecret, sig, body, vecTime, time.Second); err != nil {
			t.Fatalf("own signature %q rejected: %v", sig, err)
		}
		if err := transport.VerifyJambonz(vecSecret, sig, append(body, 'x'), vecTime, time.Second); !errors.Is(err, transport.ErrSignatureMismatch) {
			t.Fatalf("signature verified for a different body: %v", err)
		}
	})
}

// An empty secret verifies nothing (anyone can sign with it), and a v1 entry that is
// not a signature is skipped when another one is there, as Standard Webhooks
// verifiers skip what they cannot read.
func TestVerifyJambonzEmptySecretAndUnreadableEntries(t *testing.T) {
	t.Parallel()
	now := time.Unix(1700000000, 0)
	if err := transport.VerifyJambonz("", transport.SignJambonz("", now, nil), nil, now, 0); !errors.Is(err, transport.ErrNoSecret) {
		t.Fatalf("empty secret: %v", err)
	}
	valid := strings.TrimPrefix(vecSig, "t=1700000000,")
	for header, want := range map[string]error{
		"t=1700000000,v1=00," + valid:      nil,
		"t=1700000000," + valid + ",v1=zz": nil,
		"t=1700000000,v1=00":               transport.ErrSignatureMalformed,
		"t=1700000000,v1=00,v1=zz":         transport.ErrSignatureMalformed,
	} {
		err := transport.VerifyJambonz(vecSecret, header, []byte(vecBody), now, 0)
		if want == nil && err != nil || want != nil && !errors.Is(err, want) {
			t.Errorf("%q: %v, want %v", header, err, want)
		}
	}
}
