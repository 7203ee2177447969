package webhooksig

import (
	"crypto/ed25519"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Signer signs outgoing webhooks with every key it holds. During key rotation it holds
// the new and the old key, and the receiver accepts the message with either.
//
// A Signer is safe for concurrent use once built; do not change its fields while
// it signs.
type Signer struct {
	// Secrets sign v1 (HMAC-SHA256) signatures, in this order.
	Secrets []Secret
	// SigningKeys sign v1a (ed25519) signatures, after the v1 ones.
	SigningKeys []SigningKey
}

// NewSigner builds a Signer from serialized keys: "whsec_" secrets and "whsk_" signing
// keys, in any mix. A public key or any other string is ErrMalformedSecret; no key at
// all is ErrNoKeys.
func NewSigner(encoded ...string) (*Signer, error) {
	s := &Signer{}
	for i, e := range encoded {
		switch KindOf(e) {
		case KindSecret:
			sec, err := ParseSecret(e)
			if err != nil {
				return nil, fmt.Errorf("signer key %d: %w", i, err)
			}
			s.Secrets = append(s.Secrets, sec)
		case KindSigningKey:
			key, err := ParseSigningKey(e)
			if err != nil {
				return nil, fmt.Errorf("signer key %d: %w", i, err)
			}
			s.SigningKeys = append(s.SigningKeys, key)
		default:
			return nil, fmt.Errorf("signer key %d: %w: want a %q secret or a %q signing key",
				i, ErrMalformedSecret, SecretPrefix, SigningKeyPrefix)
		}
	}
	if len(s.Secrets)+len(s.SigningKeys) == 0 {
		return nil, ErrNoKeys
	}
	return s, nil
}

// Sign returns the webhook-signature header value for one attempt: one "version,base64"
// entry per key, space-separated. id must be non-empty visible ASCII without "."
// (ErrInvalidID); ts is truncated to whole seconds and must not precede the Unix epoch
// (ErrInvalidTimestamp); a Signer without keys returns ErrNoKeys.
func (s *Signer) Sign(id string, ts time.Time, body []byte) (string, error) {
	if len(s.Secrets)+len(s.SigningKeys) == 0 {
		return "", ErrNoKeys
	}
	if problem := idProblem(id); problem != "" {
		return "", fmt.Errorf("%w: %s", ErrInvalidID, problem)
	}
	unix, err := unixSeconds(ts)
	if err != nil {
		return "", err
	}
	for i, sec := range s.Secrets {
		if len(sec.key) == 0 {
			return "", fmt.Errorf("%w: secret %d is the zero Secret", ErrNoKeys, i)
		}
	}
	for i, key := range s.SigningKeys {
		if len(key.key) == 0 {
			return "", fmt.Errorf("%w: signing key %d is the zero SigningKey", ErrNoKeys, i)
		}
	}

	// Exact size: each entry is version + "," + base64, entries joined by one space.
	const v1Entry = len(VersionHMAC) + 1 + 44     // base64 of 32 bytes
	const v1aEntry = len(VersionEd25519) + 1 + 88 // base64 of 64 bytes
	var out strings.Builder
	out.Grow(len(s.Secrets)*(v1Entry+1) + len(s.SigningKeys)*(v1aEntry+1))

	for _, sec := range s.Secrets {
		writeEntry(&out, VersionHMAC, hmacContent(sec.key, id, unix, body))
	}
	if len(s.SigningKeys) > 0 {
		msg := appendContent(make([]byte, 0, contentCap(id, body)), id, unix, body)
		for _, key := range s.SigningKeys {
			writeEntry(&out, VersionEd25519, ed25519.Sign(key.key, msg))
		}
	}
	return out.String(), nil
}

func writeEntry(out *strings.Builder, version string, sig []byte) {
	if out.Len() > 0 {
		out.WriteByte(' ')
	}
	out.WriteString(version)
	out.WriteByte(',')
	var buf [88]byte // base64 of the largest signature, 64 bytes
	out.Write(canonicalBase64.AppendEncode(buf[:0], sig))
}

// Headers returns the three Standard Webhooks headers for one attempt: webhook-id,
// webhook-timestamp (Unix seconds) and webhook-signature. Errors are those of Sign.
func (s *Signer) Headers(id string, ts time.Time, body []byte) (http.Header, error) {
	sig, err := s.Sign(id, ts, body)
	if err != nil {
		return nil, err
	}
	h := make(http.Header, 3)
	h.Set(HeaderID, id)
	h.Set(HeaderTimestamp, strconv.FormatInt(ts.Unix(), 10))
	h.Set(HeaderSignature, sig)
	return h, nil
}
