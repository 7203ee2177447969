package webhooksig_test

import (
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/internal/testkit"
	"github.com/switchboard-voice/switchboard/transport/webhooksig"
)

// FuzzParseKeys feeds one string to every key parser. None panics; a refusal is
// ErrMalformedSecret with the zero key; at most one parser accepts, the one KindOf
// names; what parses re-encodes to a string that parses to an equal key (the very input
// for whsec_ and whpk_, which have one encoding); NewSigner, NewVerifier and AddKey agree
// with the parsers; and a key that parses signs, for any body, what its verifying half
// then verifies, with Matches naming it.
func FuzzParseKeys(f *testing.F) {
	sk, pk := webhooksig.NewKeyPair()
	for _, seed := range []string{
		vectorSecret, vectorSigningKey, webhooksig.NewSecret(), sk, pk,
		"whsk_" + b64(64, 1), // seed and public half that do not belong together
		"whsec_" + b64(23, 7), "whsec_" + b64(65, 7), "whsec_", "whpk_" + b64(31, 2), "whsk_AAAA",
		"whsec_" + b64(32, 7)[:20] + "\n" + b64(32, 7)[20:], "WHSEC_" + b64(32, 7), "plain-secret", "",
	} {
		f.Add(seed, []byte(vectorBody))
	}
	// The 64-byte form of a real signing key: its public half matches.
	seed, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(vectorSigningKey, webhooksig.SigningKeyPrefix))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(webhooksig.SigningKeyPrefix+base64.StdEncoding.EncodeToString(ed25519.NewKeyFromSeed(seed)), []byte{})
	now := time.Unix(vectorTimestamp, 0)
	f.Fuzz(func(t *testing.T, encoded string, body []byte) {
		sec, secErr := webhooksig.ParseSecret(encoded)
		sign, signErr := webhooksig.ParseSigningKey(encoded)
		pub, pubErr := webhooksig.ParsePublicKey(encoded)
		for _, err := range []error{secErr, signErr, pubErr} {
			if err != nil && !errors.Is(err, webhooksig.ErrMalformedSecret) {
				t.Fatalf("parse error %v is not ErrMalformedSecret", err)
			}
		}
		if secErr != nil && !sec.Equal(webhooksig.Secret{}) || signErr != nil && !sign.Equal(webhooksig.SigningKey{}) ||
			pubErr != nil && !pub.Equal(webhooksig.PublicKey{}) {
			t.Fatal("a parser returned a key with its error")
		}
		kind := webhooksig.KindOf(encoded)
		accepted := map[webhooksig.KeyKind]bool{
			webhooksig.KindSecret: secErr == nil, webhooksig.KindSigningKey: signErr == nil, webhooksig.KindPublicKey: pubErr == nil,
		}
		for k, ok := range accepted {
			if ok && k != kind {
				t.Fatalf("%q parsed as a %s but KindOf says %s", encoded, k, kind)
			}
		}

		_, signerErr := webhooksig.NewSigner(encoded)
		if (signerErr == nil) != (secErr == nil || signErr == nil) {
			t.Fatalf("NewSigner(%q) = %v, but the parsers say secret %v, signing key %v", encoded, signerErr, secErr, signErr)
		}
		v := &webhooksig.Verifier{Clock: testkit.NewClockAt(now)}
		slot, addErr := v.AddKey(encoded)
		if (addErr == nil) != (secErr == nil || pubErr == nil) {
			t.Fatalf("AddKey(%q) = %v, but the parsers say secret %v, public key %v", encoded, addErr, secErr, pubErr)
		}
		if addErr != nil && (len(v.Secrets)+len(v.PublicKeys) != 0 || !errors.Is(addErr, webhooksig.ErrMalformedSecret)) {
			t.Fatalf("AddKey(%q) failed with %v but changed the Verifier", encoded, addErr)
		}
		if _, err := webhooksig.NewVerifier(encoded); (err == nil) != (addErr == nil) {
			t.Fatalf("NewVerifier(%q) = %v, AddKey = %v", encoded, err, addErr)
		}

		var signer *webhooksig.Signer
		switch {
		case secErr == nil:
			if sec.Encode() != encoded {
				t.Fatalf("secret %q re-encodes to another string", encoded)
			}
			again, err := webhooksig.ParseSecret(sec.Encode())
			if err != nil || !again.Equal(sec) {
				t.Fatalf("re-parse of a secret: %v", err)
			}
			if strings.Contains(sec.String()+sec.GoString(), strings.TrimPrefix(encoded, webhooksig.SecretPrefix)) {
				t.Fatal("String or GoString shows the secret")
			}
			signer = &webhooksig.Signer{Secrets: []webhooksig.Secret{sec}}
		case signErr == nil:
			again, err := webhooksig.ParseSigningKey(sign.Encode())
			if err != nil || !again.Equal(sign) || !strings.HasPrefix(sign.Encode(), webhooksig.SigningKeyPrefix) {
				t.Fatalf("re-parse of a signing key: %v", err)
			}
			if _, err := v.AddKey(sign.Public().Encode()); err != nil {
				t.Fatalf("the public half of %q does not parse: %v", encoded, err)
			}
			slot = webhooksig.Match{Version: webhooksig.VersionEd25519, Key: 0}
			signer = &webhooksig.Signer{SigningKeys: []webhooksig.SigningKey{sign}}
		case pubErr == nil:
			if pub.Encode() != encoded {
				t.Fatalf("public key %q re-encodes to another string", encoded)
			}
			if again, err := webhooksig.ParsePublicKey(pub.Encode()); err != nil || !again.Equal(pub) {
				t.Fatalf("re-parse of a public key: %v", err)
			}
			return // nothing to sign with
		default:
			return
		}
		h, err := signer.Headers("msg_fuzz", now, body)
		if err != nil {
			t.Fatalf("sign with %q: %v", encoded, err)
		}
		matches, err := v.Matches(h, body)
		if err != nil || !slices.Equal(matches, []webhooksig.Match{slot}) {
			t.Fatalf("sign-then-verify with %q: matches %v, %v; want [%v]", encoded, matches, err, slot)
		}
		if err := v.Verify(h, append(body, 'x')); !errors.Is(err, webhooksig.ErrInvalidSignature) {
			t.Fatalf("verified for another body: %v", err)
		}
	})
}
