package webhooksig_test

import (
	"errors"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/internal/testkit"
	"github.com/switchboard-voice/switchboard/transport/webhooksig"
)

// Matches names every key that verifies the message, Secrets in order then
// PublicKeys, by the Match AddKey returned for it; its errors are Verify's.
func TestVerifierMatchesNamesTheKeys(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_800_000_000, 0)
	oldSecret, newSecret, unrelated := newSecret(t), newSecret(t), newSecret(t)
	sk, pk := newKeyPair(t)
	_, otherPK := newKeyPair(t)
	body := []byte(`{"n":1}`)
	both, err := mustSigner(t, newSecret, oldSecret, sk).Headers("msg_m", now, body)
	if err != nil {
		t.Fatal(err)
	}
	onlyOld, err := mustSigner(t, oldSecret).Headers("msg_m", now, body)
	if err != nil {
		t.Fatal(err)
	}
	v := &webhooksig.Verifier{Clock: testkit.NewClockAt(now)}
	slot := map[string]webhooksig.Match{}
	for _, k := range []string{otherPK, unrelated, oldSecret, pk, newSecret} {
		m, err := v.AddKey(k)
		if err != nil {
			t.Fatalf("AddKey: %v", err)
		}
		slot[k] = m
	}
	if want := (webhooksig.Match{Version: webhooksig.VersionEd25519, Key: 1}); slot[pk] != want {
		t.Fatalf("AddKey(second public key) = %v, want %v", slot[pk], want)
	}
	if want := (webhooksig.Match{Version: webhooksig.VersionHMAC, Key: 2}); slot[newSecret] != want {
		t.Fatalf("AddKey(third secret) = %v, want %v", slot[newSecret], want)
	}
	for _, tc := range []struct {
		name string
		h    http.Header
		want []webhooksig.Match
	}{
		{"signed by every key of the rotation", both, []webhooksig.Match{slot[oldSecret], slot[newSecret], slot[pk]}},
		{"signed by the old secret only", onlyOld, []webhooksig.Match{slot[oldSecret]}},
	} {
		got, err := v.Matches(tc.h, body)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%s: Matches = %v, %v; want %v", tc.name, got, err, tc.want)
		}
		if err := v.Verify(tc.h, body); err != nil {
			t.Errorf("%s: Verify = %v", tc.name, err)
		}
	}
	for name, tc := range map[string]struct {
		h    http.Header
		body []byte
		want error
	}{
		"altered body":   {both, []byte(`{"n":2}`), webhooksig.ErrInvalidSignature},
		"missing header": {http.Header{}, body, webhooksig.ErrMissingHeaders},
	} {
		got, err := v.Matches(tc.h, tc.body)
		if got != nil || !errors.Is(err, tc.want) || !errors.Is(v.Verify(tc.h, tc.body), tc.want) {
			t.Errorf("%s: Matches = %v, %v; want nothing and %v like Verify", name, got, err, tc.want)
		}
	}
}

// AddKey refuses what a receiver cannot verify with, and changes nothing then.
func TestVerifierAddKeyRefuses(t *testing.T) {
	t.Parallel()
	sk, _ := newKeyPair(t)
	for _, k := range []string{sk, "whsec_AAAA", "whpk_AAAA", "plain-secret", ""} {
		v := &webhooksig.Verifier{}
		if m, err := v.AddKey(k); !errors.Is(err, webhooksig.ErrMalformedSecret) || m != (webhooksig.Match{}) ||
			len(v.Secrets)+len(v.PublicKeys) != 0 {
			t.Errorf("AddKey(%.12q) = %v, %v and kept %d keys; want ErrMalformedSecret and no change", k, m, err, len(v.Secrets)+len(v.PublicKeys))
		}
	}
}

func TestKindOf(t *testing.T) {
	t.Parallel()
	sk, pk := newKeyPair(t)
	for encoded, want := range map[string]webhooksig.KeyKind{
		newSecret(t): webhooksig.KindSecret, "whsec_": webhooksig.KindSecret,
		sk: webhooksig.KindSigningKey, pk: webhooksig.KindPublicKey,
		"WHSEC_x": webhooksig.KindUnknown, "plain": webhooksig.KindUnknown, "": webhooksig.KindUnknown,
	} {
		if got := webhooksig.KindOf(encoded); got != want {
			t.Errorf("KindOf(%.10q) = %s, want %s", encoded, got, want)
		}
	}
	if got := webhooksig.KindSigningKey.String(); got != "whsk_ signing key" {
		t.Errorf("KindSigningKey.String() = %q", got)
	}
}

// ClaimedTime reads what webhook-timestamp claims, for display, even when Verify
// would refuse it as malformed.
func TestClaimedTime(t *testing.T) {
	t.Parallel()
	for ts, want := range map[string]int64{
		"1614265330": 1614265330, "+5": 5, "007": 7, "": -1, "-1": -1, "x": -1, "99999999999999999999": -1,
	} {
		got, ok := webhooksig.ClaimedTime(http.Header{"webhook-timestamp": {ts}})
		if want < 0 && (ok || !got.IsZero()) || want >= 0 && (!ok || got.Unix() != want) {
			t.Errorf("ClaimedTime(%q) = %v, %v; want %d", ts, got, ok, want)
		}
	}
}

func TestKeysEqual(t *testing.T) {
	t.Parallel()
	sk1, pk1 := newKeyPair(t)
	sk2, pk2 := newKeyPair(t)
	a, _ := webhooksig.ParseSigningKey(sk1)
	a2, _ := webhooksig.ParseSigningKey(sk1)
	b, _ := webhooksig.ParseSigningKey(sk2)
	p, _ := webhooksig.ParsePublicKey(pk1)
	q, _ := webhooksig.ParsePublicKey(pk2)
	if !a.Equal(a2) || a.Equal(b) || a.Equal(webhooksig.SigningKey{}) {
		t.Error("SigningKey.Equal")
	}
	if !p.Equal(a.Public()) || p.Equal(q) || p.Equal(webhooksig.PublicKey{}) {
		t.Error("PublicKey.Equal")
	}
	if !(webhooksig.SigningKey{}).Public().Equal(webhooksig.PublicKey{}) {
		t.Error("the zero SigningKey has a public key")
	}
}
