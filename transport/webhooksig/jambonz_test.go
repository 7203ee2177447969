package webhooksig_test

import (
	"bytes"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/transport/webhooksig"
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
	if got := webhooksig.SignJambonz(vecSecret, vecTime, []byte(vecBody)); got != vecSig {
		t.Errorf("SignJambonz = %s, want %s", got, vecSig)
	}
	if got := webhooksig.SignJambonz(vecSecret, vecTime.Add(900*time.Millisecond), nil); got != vecEmpty {
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
		{"tampered body", vecSecret, vecSig, []byte(`{"call_sid":"abd"}`), vecTime, 0, webhooksig.ErrInvalidSignature},
		{"wrong secret", "other", vecSig, body, vecTime, 0, webhooksig.ErrInvalidSignature},
		{"too old", vecSecret, vecSig, body, vecTime.Add(301 * time.Second), 0, webhooksig.ErrTimestampTooOld},
		{"from the future", vecSecret, vecSig, body, vecTime.Add(-11 * time.Second), 10 * time.Second, webhooksig.ErrTimestampTooNew},
		{"tampered timestamp", vecSecret, strings.Replace(vecSig, "t=1700000000", "t=1700000001", 1), body, vecTime, 0, webhooksig.ErrInvalidSignature},
		{"empty", vecSecret, "", body, vecTime, 0, webhooksig.ErrMalformedHeader},
		{"no t", vecSecret, strings.TrimPrefix(vecSig, "t=1700000000,"), body, vecTime, 0, webhooksig.ErrMalformedHeader},
		{"no v1", vecSecret, "t=1700000000", body, vecTime, 0, webhooksig.ErrMalformedHeader},
		{"two t", vecSecret, "t=1," + vecSig, body, vecTime, 0, webhooksig.ErrMalformedHeader},
		{"negative t", vecSecret, "t=-1,v1=" + strings.Repeat("00", 32), body, vecTime, 0, webhooksig.ErrMalformedHeader},
		{"short v1", vecSecret, "t=1700000000,v1=abcd", body, vecTime, 0, webhooksig.ErrMalformedHeader},
		{"non-hex v1", vecSecret, "t=1700000000,v1=" + strings.Repeat("zz", 32), body, vecTime, 0, webhooksig.ErrMalformedHeader},
		{"item without =", vecSecret, vecSig + ",junk", body, vecTime, 0, webhooksig.ErrMalformedHeader},
		{"huge t", vecSecret, "t=99999999999999999999,v1=" + strings.Repeat("00", 32), body, vecTime, 0, webhooksig.ErrMalformedHeader},
		{"too many v1", vecSecret, "t=1700000000" + strings.Repeat(",v1="+strings.Repeat("00", 32), 9), body, vecTime, 0, webhooksig.ErrMalformedHeader},
	}
	for _, r := range rows {
		err := webhooksig.VerifyJambonz(r.secret, r.header, r.body, r.now, r.tolerance)
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
		err := webhooksig.VerifyJambonz(vecSecret, header, body, vecTime, time.Hour)
		if err != nil && !errors.Is(err, webhooksig.ErrMalformedHeader) && !errors.Is(err, webhooksig.ErrTimestampTooOld) &&
			!errors.Is(err, webhooksig.ErrTimestampTooNew) && !errors.Is(err, webhooksig.ErrInvalidSignature) {
			t.Fatalf("unexpected error kind: %v", err)
		}
		// Round trip: what we sign always verifies, and never for another body.
		sig := webhooksig.SignJambonz(vecSecret, vecTime, body)
		if err := webhooksig.VerifyJambonz(vecSecret, sig, body, vecTime, time.Second); err != nil {
			t.Fatalf("own signature %q rejected: %v", sig, err)
		}
		if err := webhooksig.VerifyJambonz(vecSecret, sig, append(body, 'x'), vecTime, time.Second); !errors.Is(err, webhooksig.ErrInvalidSignature) {
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
	if err := webhooksig.VerifyJambonz("", webhooksig.SignJambonz("", now, nil), nil, now, 0); !errors.Is(err, webhooksig.ErrNoKeys) {
		t.Fatalf("empty secret: %v", err)
	}
	valid := strings.TrimPrefix(vecSig, "t=1700000000,")
	for header, want := range map[string]error{
		"t=1700000000,v1=00," + valid:      nil,
		"t=1700000000," + valid + ",v1=zz": nil,
		"t=1700000000,v1=00":               webhooksig.ErrMalformedHeader,
		"t=1700000000,v1=00,v1=zz":         webhooksig.ErrMalformedHeader,
	} {
		err := webhooksig.VerifyJambonz(vecSecret, header, []byte(vecBody), now, 0)
		if want == nil && err != nil || want != nil && !errors.Is(err, want) {
			t.Errorf("%q: %v, want %v", header, err, want)
		}
	}
}

// The wording of each failure is what `switchboard verify` prints (and returns in its
// --json "error"), so it is pinned here along with the sentinel it wraps.
func TestJambonzErrorMessages(t *testing.T) {
	t.Parallel()
	body := []byte(vecBody)
	for _, tc := range []struct {
		secrets []string
		header  string
		now     time.Time
		want    error
		msg     string
	}{
		{[]string{"other"}, vecSig, vecTime, webhooksig.ErrInvalidSignature, "Jambonz-Signature does not match (1 v1 signature(s) checked)"},
		{[]string{vecSecret}, vecSig, vecTime.Add(time.Hour), webhooksig.ErrTimestampTooOld, "Jambonz-Signature timestamp outside tolerance: t=1700000000 is 1h0m0s away from now"},
		{[]string{vecSecret}, vecSig, vecTime.Add(-time.Hour), webhooksig.ErrTimestampTooNew, "Jambonz-Signature timestamp outside tolerance: t=1700000000 is 1h0m0s away from now"},
		{[]string{vecSecret}, "t=1,v1=zz", vecTime, webhooksig.ErrMalformedHeader, "malformed Jambonz-Signature header: v1 is not 32 hex bytes"},
		{[]string{vecSecret}, "t=1", vecTime, webhooksig.ErrMalformedHeader, "malformed Jambonz-Signature header: no v1 signature"},
		{[]string{vecSecret}, "v1=00", vecTime, webhooksig.ErrMalformedHeader, "malformed Jambonz-Signature header: no t"},
		{[]string{vecSecret}, "t=1,t=2", vecTime, webhooksig.ErrMalformedHeader, "malformed Jambonz-Signature header: more than one t"},
		{[]string{vecSecret}, "t=x1", vecTime, webhooksig.ErrMalformedHeader, `malformed Jambonz-Signature header: t="x1" is not a unix time`},
		{[]string{vecSecret}, vecSig + "," + strings.Repeat("j", 40), vecTime, webhooksig.ErrMalformedHeader,
			`malformed Jambonz-Signature header: item "` + strings.Repeat("j", 32) + `..." is not key=value`},
		{[]string{vecSecret}, "t=1" + strings.Repeat(",v1=00", 9), vecTime, webhooksig.ErrMalformedHeader, "malformed Jambonz-Signature header: more than 8 v1 signatures"},
		{nil, vecSig, vecTime, webhooksig.ErrNoKeys, "no webhook secret to verify Jambonz-Signature with"},
		{[]string{vecSecret, ""}, vecSig, vecTime, webhooksig.ErrNoKeys, "no webhook secret to verify Jambonz-Signature with"},
	} {
		i, err := webhooksig.MatchJambonz(tc.secrets, tc.header, body, tc.now, 0)
		if !errors.Is(err, tc.want) || err.Error() != tc.msg || i != -1 {
			t.Errorf("MatchJambonz(%q, %q) = %d, %v; want -1, %q wrapping %v", tc.secrets, tc.header, i, err, tc.msg, tc.want)
		}
	}
}

// During rotation the first secret, in the order given, whose signature the header
// carries is reported; a header signed with both keys names the first one listed.
func TestMatchJambonzReportsWhichSecret(t *testing.T) {
	t.Parallel()
	body := []byte(vecBody)
	other := webhooksig.SignJambonz("other", vecTime, body)
	both := vecSig + strings.TrimPrefix(other, "t=1700000000")
	for _, tc := range []struct {
		secrets []string
		header  string
		want    int
	}{
		{[]string{vecSecret}, vecSig, 0},
		{[]string{"new", vecSecret}, vecSig, 1},
		{[]string{"new", "older", vecSecret}, vecSig, 2},
		{[]string{"other", vecSecret}, both, 0},
		{[]string{vecSecret, "other"}, both, 0},
		{[]string{"new", "other"}, both, 1},
	} {
		i, err := webhooksig.MatchJambonz(tc.secrets, tc.header, body, vecTime, 0)
		if err != nil || i != tc.want {
			t.Errorf("MatchJambonz(%q, %q) = %d, %v; want %d", tc.secrets, tc.header, i, err, tc.want)
		}
	}
	if i, err := webhooksig.MatchJambonz([]string{"a", "b"}, vecSig, body, vecTime, 0); !errors.Is(err, webhooksig.ErrInvalidSignature) || i != -1 {
		t.Errorf("no secret matches: %d, %v", i, err)
	}
}

func TestParseJambonzSignature(t *testing.T) {
	t.Parallel()
	sig, err := webhooksig.ParseJambonzSignature(" t=1700000000 , v1=" + strings.Repeat("AB", 32) + ",v0=x,v1=zz,v1=" + strings.Repeat("01", 32))
	if err != nil {
		t.Fatal(err)
	}
	if sig.Timestamp != 1_700_000_000 || len(sig.Signatures) != 2 || sig.Signatures[0][0] != 0xab || sig.Signatures[1][0] != 0x01 {
		t.Fatalf("parsed %+v", sig)
	}
	if want := "t=1700000000,v1=" + strings.Repeat("ab", 32) + ",v1=" + strings.Repeat("01", 32); sig.String() != want {
		t.Errorf("String = %q, want %q", sig.String(), want)
	}
	if sig, err := webhooksig.ParseJambonzSignature(vecSig); err != nil || sig.String() != vecSig {
		t.Errorf("SignJambonz's own value: %q, %v", sig, err)
	}
	for _, bad := range []string{"", "t=1", "t=1,v1=00", "t=-1,v1=" + strings.Repeat("00", 32), "t=1,,v1=" + strings.Repeat("00", 32)} {
		if sig, err := webhooksig.ParseJambonzSignature(bad); !errors.Is(err, webhooksig.ErrMalformedHeader) || sig.Signatures != nil || sig.Timestamp != 0 {
			t.Errorf("ParseJambonzSignature(%q) = %+v, %v; want nothing and ErrMalformedHeader", bad, sig, err)
		}
	}
}

// ClaimedJambonzTime reads what a header claims, for display, even when the header
// would not verify.
func TestClaimedJambonzTime(t *testing.T) {
	t.Parallel()
	for header, want := range map[string]int64{
		vecSig:                 1_700_000_000,
		"t=1,v1=zz":            1,
		" t=+5 ":               5,
		"v1=00,t=7,t=8":        7,
		"t=x,t=9":              9,
		"t=99999999999999,v1=": 99_999_999_999_999,
		"t=-1":                 -1,
		"":                     -1,
		"v1=00":                -1,
	} {
		got, ok := webhooksig.ClaimedJambonzTime(header)
		if want < 0 {
			if ok || !got.IsZero() {
				t.Errorf("ClaimedJambonzTime(%q) = %v, %v; want nothing", header, got, ok)
			}
			continue
		}
		if !ok || got.Unix() != want {
			t.Errorf("ClaimedJambonzTime(%q) = %v, %v; want %d", header, got, ok, want)
		}
	}
}

// FuzzParseJambonzSignature: parsing never panics; a value that parses re-encodes to
// one that parses to the same timestamp and signatures; every signature kept is in the
// input; and a value that fails to parse never verifies.
func FuzzParseJambonzSignature(f *testing.F) {
	for _, seed := range []string{vecSig, vecEmpty, "", "t=", "t=1,v1=00,v1=zz", " t=1 ,v1=" + strings.Repeat("AB", 32), "t=1,t=2", "v1=t=1", "t=1,x=y,v2=" + strings.Repeat("00", 32)} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, header string) {
		sig, err := webhooksig.ParseJambonzSignature(header)
		if err != nil {
			if !errors.Is(err, webhooksig.ErrMalformedHeader) || sig.Signatures != nil || sig.Timestamp != 0 {
				t.Fatalf("ParseJambonzSignature(%q) = %+v, %v", header, sig, err)
			}
			if verr := webhooksig.VerifyJambonz(vecSecret, header, nil, vecTime, time.Hour); !errors.Is(verr, webhooksig.ErrMalformedHeader) {
				t.Fatalf("VerifyJambonz of an unparseable header: %v", verr)
			}
			return
		}
		if sig.Timestamp < 0 || len(sig.Signatures) == 0 || len(sig.Signatures) > 8 {
			t.Fatalf("ParseJambonzSignature(%q) = %+v without an error", header, sig)
		}
		lower := strings.ToLower(header)
		for _, s := range sig.Signatures {
			if len(s) != 32 || !strings.Contains(lower, hex.EncodeToString(s)) {
				t.Fatalf("signature %x is not one of the input %q", s, header)
			}
		}
		again, err := webhooksig.ParseJambonzSignature(sig.String())
		if err != nil || again.Timestamp != sig.Timestamp || len(again.Signatures) != len(sig.Signatures) {
			t.Fatalf("re-parse of %q: %+v, %v", sig.String(), again, err)
		}
		for i := range sig.Signatures {
			if !bytes.Equal(again.Signatures[i], sig.Signatures[i]) {
				t.Fatalf("re-parse changed signature %d", i)
			}
		}
	})
}
