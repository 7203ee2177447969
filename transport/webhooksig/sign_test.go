package webhooksig_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/transport/webhooksig"
)

func mustSigner(t testing.TB, encoded ...string) *webhooksig.Signer {
	t.Helper()
	s, err := webhooksig.NewSigner(encoded...)
	if err != nil {
		t.Fatalf("NewSigner: %v", err)
	}
	return s
}

func newSecret(testing.TB) string { return webhooksig.NewSecret() }

func newKeyPair(testing.TB) (string, string) { return webhooksig.NewKeyPair() }

func TestSignMatchesPublishedVectors(t *testing.T) {
	t.Parallel()
	ts := time.Unix(vectorTimestamp, 0)
	for _, tc := range []struct {
		name, key, want string
	}{
		{"v1 HMAC", vectorSecret, vectorSignatureV1},
		{"v1a ed25519", vectorSigningKey, vectorSignatureV1a},
		{"rotation: both in key order", vectorSecret + "|" + vectorSigningKey, vectorSignatureV1 + " " + vectorSignatureV1a},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := mustSigner(t, strings.Split(tc.key, "|")...).Sign(vectorID, ts, []byte(vectorBody))
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Fatalf("Sign = %q\nwant   %q", got, tc.want)
			}
		})
	}
}

func TestSignTruncatesToWholeSeconds(t *testing.T) {
	t.Parallel()
	s := mustSigner(t, vectorSecret)
	got, err := s.Sign(vectorID, time.Unix(vectorTimestamp, 999_999_999), []byte(vectorBody))
	if err != nil {
		t.Fatal(err)
	}
	if got != vectorSignatureV1 {
		t.Fatalf("Sign with sub-second time = %q, want %q", got, vectorSignatureV1)
	}
}

func TestSignRotationPutsEverySignatureInOneHeader(t *testing.T) {
	t.Parallel()
	oldSecret, newSecret := newSecret(t), newSecret(t)
	sk, _ := newKeyPair(t)
	ts := time.Unix(1_700_000_000, 0)
	body := []byte(`{"type":"call.status"}`)

	got, err := mustSigner(t, newSecret, oldSecret, sk).Sign("evt_1", ts, body)
	if err != nil {
		t.Fatal(err)
	}
	entries := strings.Split(got, " ")
	if len(entries) != 3 {
		t.Fatalf("header %q has %d entries, want 3", got, len(entries))
	}
	for i, key := range []string{newSecret, oldSecret, sk} {
		single, err := mustSigner(t, key).Sign("evt_1", ts, body)
		if err != nil {
			t.Fatal(err)
		}
		if entries[i] != single {
			t.Errorf("entry %d = %q, want the single-key signature %q", i, entries[i], single)
		}
	}
}

func TestSignRejectsBadInput(t *testing.T) {
	t.Parallel()
	ok := mustSigner(t, vectorSecret)
	now := time.Unix(vectorTimestamp, 0)
	for _, tc := range []struct {
		name   string
		signer *webhooksig.Signer
		id     string
		ts     time.Time
		want   error
	}{
		{"empty id", ok, "", now, webhooksig.ErrInvalidID},
		{"id with full stop", ok, "msg.1", now, webhooksig.ErrInvalidID},
		{"id with space", ok, "msg 1", now, webhooksig.ErrInvalidID},
		{"id with newline", ok, "msg\n1", now, webhooksig.ErrInvalidID},
		{"id with non-ASCII", ok, "msg_é", now, webhooksig.ErrInvalidID},
		{"time before the epoch", ok, "msg_1", time.Unix(-1, 0), webhooksig.ErrInvalidTimestamp},
		{"no keys", &webhooksig.Signer{}, "msg_1", now, webhooksig.ErrNoKeys},
		{"zero Secret", &webhooksig.Signer{Secrets: []webhooksig.Secret{{}}}, "msg_1", now, webhooksig.ErrNoKeys},
		{"zero SigningKey", &webhooksig.Signer{SigningKeys: []webhooksig.SigningKey{{}}}, "msg_1", now, webhooksig.ErrNoKeys},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.signer.Sign(tc.id, tc.ts, []byte("{}"))
			if !errors.Is(err, tc.want) {
				t.Fatalf("Sign error = %v, want %v", err, tc.want)
			}
			if got != "" {
				t.Fatalf("Sign returned %q with an error", got)
			}
			if h, err := tc.signer.Headers(tc.id, tc.ts, []byte("{}")); !errors.Is(err, tc.want) || h != nil {
				t.Fatalf("Headers = %v, %v; want nil, %v", h, err, tc.want)
			}
		})
	}
}

func TestHeadersSetsTheThreeHeaders(t *testing.T) {
	t.Parallel()
	h, err := mustSigner(t, vectorSecret).Headers(vectorID, time.Unix(vectorTimestamp, 0), []byte(vectorBody))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"webhook-id":        vectorID,
		"webhook-timestamp": "1614265330",
		"webhook-signature": vectorSignatureV1,
	}
	for name, value := range want {
		if got := h.Values(name); len(got) != 1 || got[0] != value {
			t.Errorf("header %s = %q, want [%q]", name, got, value)
		}
	}
	if len(h) != len(want) {
		t.Errorf("Headers set %d headers, want %d: %v", len(h), len(want), h)
	}
}

func TestNewSigner(t *testing.T) {
	t.Parallel()
	sk, pk := newKeyPair(t)
	s, err := webhooksig.NewSigner(vectorSecret, sk)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Secrets) != 1 || len(s.SigningKeys) != 1 {
		t.Fatalf("NewSigner kept %d secrets and %d signing keys, want 1 and 1", len(s.Secrets), len(s.SigningKeys))
	}
	for _, tc := range []struct {
		name string
		keys []string
		want error
	}{
		{"nothing", nil, webhooksig.ErrNoKeys},
		{"public key cannot sign", []string{pk}, webhooksig.ErrMalformedSecret},
		{"unprefixed secret", []string{strings.TrimPrefix(vectorSecret, "whsec_")}, webhooksig.ErrMalformedSecret},
		{"bad secret after a good one", []string{vectorSecret, "whsec_!!!!"}, webhooksig.ErrMalformedSecret},
		{"bad signing key", []string{"whsk_AAAA"}, webhooksig.ErrMalformedSecret},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := webhooksig.NewSigner(tc.keys...)
			if !errors.Is(err, tc.want) || s != nil {
				t.Fatalf("NewSigner = %v, %v; want nil, %v", s, err, tc.want)
			}
		})
	}
}
