package webhooksig

import (
	"crypto/ed25519"
	"crypto/sha256"
	"fmt"
	"strings"
)

// Header names, as the spec writes them. HTTP header names are case-insensitive;
// http.Header stores them canonicalized ("Webhook-Id").
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
)

// Signature scheme identifiers.
const (
	VersionHMAC    = "v1"  // HMAC-SHA256
	VersionEd25519 = "v1a" // ed25519
)

// MaxSignatures is the most entries a webhook-signature header may hold. It bounds the
// work an unauthenticated request can cause (each v1a entry costs an ed25519 check per
// public key); rotation needs two per scheme.
const MaxSignatures = 16

// maxVersionLen bounds a version identifier; real ones are "v1" and "v1a".
const maxVersionLen = 16

// Signature is one entry of a webhook-signature header.
type Signature struct {
	// Version is the scheme identifier: VersionHMAC, VersionEd25519, or a version this
	// package does not know (kept so callers can see it; Verify ignores it).
	Version string
	// Value is the decoded signature: 32 bytes for v1, 64 for v1a.
	Value []byte
}

// String returns the entry as it appears in the header: "version,base64".
func (s Signature) String() string {
	return s.Version + "," + canonicalBase64.EncodeToString(s.Value)
}

// ParseSignatureHeader splits a webhook-signature value into its entries.
//
// Entries are separated by spaces (runs of whitespace are tolerated) and read
// "version,base64". A version is 1 to 16 lowercase letters and digits; the value is
// canonical standard base64, of exactly 32 bytes for v1 and 64 for v1a. Entries that
// break these rules are skipped rather than failing the header, as the reference
// verifiers do, so a newer scheme beside ours does not break verification. It returns
// ErrMalformedHeader when no entry is well formed or when there are more than
// MaxSignatures entries.
func ParseSignatureHeader(v string) ([]Signature, error) {
	entries := strings.Fields(v)
	if len(entries) == 0 {
		return nil, fmt.Errorf("%w: %s is empty", ErrMalformedHeader, HeaderSignature)
	}
	if len(entries) > MaxSignatures {
		return nil, fmt.Errorf("%w: %s has %d entries, at most %d allowed",
			ErrMalformedHeader, HeaderSignature, len(entries), MaxSignatures)
	}
	sigs := make([]Signature, 0, len(entries))
	for _, entry := range entries {
		if sig, ok := parseSignatureEntry(entry); ok {
			sigs = append(sigs, sig)
		}
	}
	if len(sigs) == 0 {
		return nil, fmt.Errorf("%w: %s has no well-formed \"version,base64\" entry",
			ErrMalformedHeader, HeaderSignature)
	}
	return sigs, nil
}

func parseSignatureEntry(entry string) (Signature, bool) {
	version, encoded, ok := strings.Cut(entry, ",")
	if !ok || !validVersion(version) || encoded == "" {
		return Signature{}, false
	}
	value, err := canonicalBase64.DecodeString(encoded)
	if err != nil {
		return Signature{}, false
	}
	if want, known := signatureSize(version); known && len(value) != want {
		return Signature{}, false
	}
	return Signature{Version: version, Value: value}, true
}

func validVersion(v string) bool {
	if v == "" || len(v) > maxVersionLen {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// signatureSize is the decoded length of a known version's signature.
func signatureSize(version string) (int, bool) {
	switch version {
	case VersionHMAC:
		return sha256.Size, true
	case VersionEd25519:
		return ed25519.SignatureSize, true
	}
	return 0, false
}
