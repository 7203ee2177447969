package webhooksig_test

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/switchboard-voice/switchboard/transport/webhooksig"
)

func b64(n int, fill byte) string {
	return base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{fill}, n))
}

func TestParseSecret(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in string
		wantErr  bool
	}{
		{"published vector (24 bytes)", vectorSecret, false},
		{"64 bytes, the maximum", "whsec_" + b64(64, 7), false},
		{"32 bytes", "whsec_" + b64(32, 7), false},
		{"23 bytes, too short", "whsec_" + b64(23, 7), true},
		{"65 bytes, too long", "whsec_" + b64(65, 7), true},
		{"no prefix", strings.TrimPrefix(vectorSecret, "whsec_"), true},
		{"signing-key prefix", "whsk_" + b64(32, 7), true},
		{"upper-case prefix", "WHSEC_" + b64(32, 7), true},
		{"prefix only", "whsec_", true},
		{"empty", "", true},
		{"not base64", "whsec_" + strings.Repeat("*", 44), true},
		{"url-safe alphabet", "whsec_" + base64.URLEncoding.EncodeToString(bytes.Repeat([]byte{0xfb}, 33)), true},
		{"padding missing", "whsec_" + strings.TrimRight(b64(32, 7), "="), true},
		{"non-zero trailing bits", "whsec_" + b64(32, 7)[:42] + "B=", true},
		{"line break inside", "whsec_" + b64(32, 7)[:20] + "\n" + b64(32, 7)[20:], true},
		{"trailing space", vectorSecret + " ", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sec, err := webhooksig.ParseSecret(tc.in)
			if tc.wantErr {
				if !errors.Is(err, webhooksig.ErrMalformedSecret) {
					t.Fatalf("ParseSecret(%q) error = %v, want ErrMalformedSecret", tc.in, err)
				}
				if !sec.Equal(webhooksig.Secret{}) {
					t.Fatal("ParseSecret returned a key with its error")
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseSecret(%q): %v", tc.in, err)
			}
			if got := sec.Encode(); got != tc.in {
				t.Fatalf("Encode = %q, want %q", got, tc.in)
			}
		})
	}
}

func TestErrorsDoNotEchoSecrets(t *testing.T) {
	t.Parallel()
	tooShort := "whsec_" + b64(23, 0x5a)
	_, err := webhooksig.ParseSecret(tooShort)
	if err == nil || strings.Contains(err.Error(), b64(23, 0x5a)) {
		t.Fatalf("error %q echoes the secret", err)
	}
}

func TestNewSecret(t *testing.T) {
	t.Parallel()
	a, b := newSecret(t), newSecret(t)
	if a == b {
		t.Fatal("two NewSecret calls returned the same secret")
	}
	sec, err := webhooksig.ParseSecret(a)
	if err != nil {
		t.Fatalf("NewSecret output does not parse: %v", err)
	}
	raw, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(a, "whsec_"))
	if len(raw) != 32 {
		t.Fatalf("NewSecret has %d bytes, want 32", len(raw))
	}
	if sec.Encode() != a {
		t.Fatalf("Encode = %q, want %q", sec.Encode(), a)
	}
	same, _ := webhooksig.ParseSecret(a)
	other, _ := webhooksig.ParseSecret(b)
	if !sec.Equal(same) || sec.Equal(other) || sec.Equal(webhooksig.Secret{}) {
		t.Fatal("Equal does not tell secrets apart")
	}
}

func TestParseSigningKey(t *testing.T) {
	t.Parallel()
	seed := []byte("TESTSIGNINGKEYDONOTUSETHISFORANY")
	full := ed25519.NewKeyFromSeed(seed)
	mismatched := append(append([]byte{}, seed...), bytes.Repeat([]byte{1}, 32)...)
	for _, tc := range []struct {
		name, in string
		wantErr  bool
	}{
		{"published vector (seed)", vectorSigningKey, false},
		{"64-byte form of the same key", "whsk_" + base64.StdEncoding.EncodeToString(full), false},
		{"64-byte form with a foreign public half", "whsk_" + base64.StdEncoding.EncodeToString(mismatched), true},
		{"31 bytes", "whsk_" + b64(31, 1), true},
		{"33 bytes", "whsk_" + b64(33, 1), true},
		{"secret prefix", "whsec_" + b64(32, 1), true},
		{"public prefix", "whpk_" + b64(32, 1), true},
		{"not base64", "whsk_????", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key, err := webhooksig.ParseSigningKey(tc.in)
			if tc.wantErr {
				if !errors.Is(err, webhooksig.ErrMalformedSecret) {
					t.Fatalf("ParseSigningKey(%q) error = %v, want ErrMalformedSecret", tc.in, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			// Both forms are the vector key: they encode as its seed and share its public key.
			if key.Encode() != vectorSigningKey {
				t.Fatalf("Encode = %q, want the seed form %q", key.Encode(), vectorSigningKey)
			}
			wantPub := "whpk_" + base64.StdEncoding.EncodeToString(full.Public().(ed25519.PublicKey))
			if got := key.Public().Encode(); got != wantPub {
				t.Fatalf("Public = %q, want %q", got, wantPub)
			}
		})
	}
}

func TestParsePublicKey(t *testing.T) {
	t.Parallel()
	_, pk := newKeyPair(t)
	key, err := webhooksig.ParsePublicKey(pk)
	if err != nil {
		t.Fatal(err)
	}
	if key.Encode() != pk || key.String() != pk {
		t.Fatalf("Encode/String = %q/%q, want %q", key.Encode(), key.String(), pk)
	}
	for _, in := range []string{"whpk_" + b64(31, 2), "whpk_" + b64(64, 2), "whsk_" + b64(32, 2), "whpk_", "whpk_%%%%"} {
		if _, err := webhooksig.ParsePublicKey(in); !errors.Is(err, webhooksig.ErrMalformedSecret) {
			t.Errorf("ParsePublicKey(%q) error = %v, want ErrMalformedSecret", in, err)
		}
	}
}

func TestNewKeyPair(t *testing.T) {
	t.Parallel()
	sk, pk := newKeyPair(t)
	sk2, _ := newKeyPair(t)
	if sk == sk2 {
		t.Fatal("two NewKeyPair calls returned the same key")
	}
	key, err := webhooksig.ParseSigningKey(sk)
	if err != nil {
		t.Fatal(err)
	}
	if key.Encode() != sk {
		t.Fatalf("Encode = %q, want %q", key.Encode(), sk)
	}
	if key.Public().Encode() != pk {
		t.Fatalf("public key %q does not belong to signing key (derived %q)", pk, key.Public().Encode())
	}
}

func TestSecretsAreRedactedWhenPrinted(t *testing.T) {
	t.Parallel()
	sec, err := webhooksig.ParseSecret(vectorSecret)
	if err != nil {
		t.Fatal(err)
	}
	key, err := webhooksig.ParseSigningKey(vectorSigningKey)
	if err != nil {
		t.Fatal(err)
	}
	type config struct {
		Secret webhooksig.Secret
		Key    webhooksig.SigningKey
	}
	c := config{sec, key}
	for _, format := range []string{"%v", "%+v", "%#v", "%s"} {
		out := fmt.Sprintf(format, c)
		for _, leak := range []string{strings.TrimPrefix(vectorSecret, "whsec_"), strings.TrimPrefix(vectorSigningKey, "whsk_")} {
			if strings.Contains(out, leak) {
				t.Errorf("%s of a config prints %q, which leaks a key", format, out)
			}
		}
		if !strings.Contains(out, "redacted") {
			t.Errorf("%s of a config prints %q, want the keys shown as redacted", format, out)
		}
	}
	if got := fmt.Sprint(sec); got != "whsec_<redacted>" {
		t.Errorf("Secret prints %q", got)
	}
}
