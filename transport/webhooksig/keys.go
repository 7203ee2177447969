package webhooksig

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"strings"
)

// Prefixes of the serialized secrets, as the spec asks, so that a secret says which
// scheme it belongs to.
const (
	SecretPrefix     = "whsec_" // v1 HMAC secret
	SigningKeyPrefix = "whsk_"  // v1a ed25519 private key (32-byte seed)
	PublicKeyPrefix  = "whpk_"  // v1a ed25519 public key
)

// KeyKind is the kind of a serialized key, as its prefix tells.
type KeyKind int

// The kinds of serialized keys.
const (
	// KindUnknown is a string without one of the three prefixes: not a key of this
	// package (a Jambonz-Signature secret is a plain string, for instance).
	KindUnknown KeyKind = iota
	// KindSecret is a "whsec_" v1 HMAC secret: it signs and verifies.
	KindSecret
	// KindSigningKey is a "whsk_" v1a ed25519 private key: it signs only.
	KindSigningKey
	// KindPublicKey is a "whpk_" v1a ed25519 public key: it verifies only.
	KindPublicKey
)

// KindOf tells the kind of a serialized key from its prefix alone; it does not decode
// the key, so a key of a known kind may still fail to parse.
func KindOf(encoded string) KeyKind {
	switch {
	case strings.HasPrefix(encoded, SecretPrefix):
		return KindSecret
	case strings.HasPrefix(encoded, SigningKeyPrefix):
		return KindSigningKey
	case strings.HasPrefix(encoded, PublicKeyPrefix):
		return KindPublicKey
	}
	return KindUnknown
}

// String names the kind by its prefix ("whsec_ secret"), for messages.
func (k KeyKind) String() string {
	switch k {
	case KindSecret:
		return SecretPrefix + " secret"
	case KindSigningKey:
		return SigningKeyPrefix + " signing key"
	case KindPublicKey:
		return PublicKeyPrefix + " public key"
	}
	return "unknown key"
}

// Secret lengths in bytes. The spec asks for at least 24 bytes and at most 512 bits.
const (
	MinSecretBytes = 24
	MaxSecretBytes = 64
	// newSecretBytes is what NewSecret generates: 256 bits, the HMAC-SHA256 block's
	// natural key strength.
	newSecretBytes = 32
)

// canonicalBase64 is standard base64 with padding, refusing non-zero trailing bits so
// each value has exactly one encoding.
var canonicalBase64 = base64.StdEncoding.Strict()

// Secret is a v1 (HMAC-SHA256) signing secret, shared by sender and receiver.
// The zero value is not usable; obtain one from ParseSecret.
type Secret struct {
	key []byte
}

// ParseSecret decodes "whsec_" + base64 into a Secret. The prefix is required and the
// decoded secret must be 24 to 64 bytes; anything else is ErrMalformedSecret.
func ParseSecret(encoded string) (Secret, error) {
	key, err := decodePrefixed(encoded, SecretPrefix)
	if err != nil {
		return Secret{}, err
	}
	if len(key) < MinSecretBytes || len(key) > MaxSecretBytes {
		return Secret{}, fmt.Errorf("%w: %s secret is %d bytes, want %d to %d",
			ErrMalformedSecret, SecretPrefix, len(key), MinSecretBytes, MaxSecretBytes)
	}
	return Secret{key: key}, nil
}

// NewSecret returns a fresh random v1 secret, serialized as "whsec_" + base64 of
// 32 bytes from crypto/rand.
func NewSecret() string {
	key := make([]byte, newSecretBytes)
	rand.Read(key) // never fails: crypto/rand aborts the program instead
	return SecretPrefix + canonicalBase64.EncodeToString(key)
}

// Encode returns the "whsec_" serialization. It is the secret itself: show it once,
// never log it.
func (s Secret) Encode() string { return SecretPrefix + canonicalBase64.EncodeToString(s.key) }

// String hides the secret so that logging a Secret by accident does not leak it.
func (s Secret) String() string { return SecretPrefix + "<redacted>" }

// GoString hides the secret from %#v as well.
func (s Secret) GoString() string { return "webhooksig.Secret{<redacted>}" }

// Equal reports whether two secrets are the same key, in constant time.
func (s Secret) Equal(other Secret) bool {
	return subtle.ConstantTimeCompare(s.key, other.key) == 1
}

// SigningKey is a v1a (ed25519) private key, held by the sender only.
// The zero value is not usable; obtain one from ParseSigningKey.
type SigningKey struct {
	key ed25519.PrivateKey
}

// ParseSigningKey decodes "whsk_" + base64 into a SigningKey. The decoded value is the
// 32-byte ed25519 seed (what the Standard Webhooks libraries produce); the 64-byte
// seed-plus-public-key form is accepted too when its public half matches the seed.
// Anything else is ErrMalformedSecret.
func ParseSigningKey(encoded string) (SigningKey, error) {
	raw, err := decodePrefixed(encoded, SigningKeyPrefix)
	if err != nil {
		return SigningKey{}, err
	}
	switch len(raw) {
	case ed25519.SeedSize:
		return SigningKey{key: ed25519.NewKeyFromSeed(raw)}, nil
	case ed25519.PrivateKeySize:
		key := ed25519.NewKeyFromSeed(raw[:ed25519.SeedSize])
		if subtle.ConstantTimeCompare(key[ed25519.SeedSize:], raw[ed25519.SeedSize:]) != 1 {
			return SigningKey{}, fmt.Errorf("%w: %s key's public half does not belong to its seed",
				ErrMalformedSecret, SigningKeyPrefix)
		}
		return SigningKey{key: key}, nil
	default:
		return SigningKey{}, fmt.Errorf("%w: %s key is %d bytes, want %d (seed) or %d",
			ErrMalformedSecret, SigningKeyPrefix, len(raw), ed25519.SeedSize, ed25519.PrivateKeySize)
	}
}

// Encode returns the "whsk_" serialization of the 32-byte seed. It is the private key:
// never log it.
func (k SigningKey) Encode() string {
	return SigningKeyPrefix + canonicalBase64.EncodeToString(k.key.Seed())
}

// String hides the key so that logging a SigningKey by accident does not leak it.
func (k SigningKey) String() string { return SigningKeyPrefix + "<redacted>" }

// GoString hides the key from %#v as well.
func (k SigningKey) GoString() string { return "webhooksig.SigningKey{<redacted>}" }

// Equal reports whether two signing keys are the same key, in constant time.
func (k SigningKey) Equal(other SigningKey) bool {
	return subtle.ConstantTimeCompare(k.key, other.key) == 1
}

// Public returns the public key that verifies this key's signatures. The zero
// SigningKey has no public key: Public returns the zero PublicKey.
func (k SigningKey) Public() PublicKey {
	if len(k.key) == 0 {
		return PublicKey{}
	}
	return PublicKey{key: k.key.Public().(ed25519.PublicKey)}
}

// PublicKey is a v1a (ed25519) public key, given to receivers.
// The zero value is not usable; obtain one from ParsePublicKey or SigningKey.Public.
type PublicKey struct {
	key ed25519.PublicKey
}

// ParsePublicKey decodes "whpk_" + base64 of a 32-byte ed25519 public key. Anything
// else is ErrMalformedSecret.
func ParsePublicKey(encoded string) (PublicKey, error) {
	raw, err := decodePrefixed(encoded, PublicKeyPrefix)
	if err != nil {
		return PublicKey{}, err
	}
	if len(raw) != ed25519.PublicKeySize {
		return PublicKey{}, fmt.Errorf("%w: %s key is %d bytes, want %d",
			ErrMalformedSecret, PublicKeyPrefix, len(raw), ed25519.PublicKeySize)
	}
	return PublicKey{key: ed25519.PublicKey(raw)}, nil
}

// Encode returns the "whpk_" serialization.
func (k PublicKey) Encode() string { return PublicKeyPrefix + canonicalBase64.EncodeToString(k.key) }

// String returns the "whpk_" serialization; a public key is not secret.
func (k PublicKey) String() string { return k.Encode() }

// Equal reports whether two public keys are the same key.
func (k PublicKey) Equal(other PublicKey) bool { return bytes.Equal(k.key, other.key) }

// NewKeyPair returns a fresh ed25519 key pair from crypto/rand, serialized as
// "whsk_" (seed) and "whpk_".
func NewKeyPair() (signingKey, publicKey string) {
	seed := make([]byte, ed25519.SeedSize)
	rand.Read(seed) // never fails: crypto/rand aborts the program instead
	key := SigningKey{key: ed25519.NewKeyFromSeed(seed)}
	return key.Encode(), key.Public().Encode()
}

// decodePrefixed strips a required prefix and decodes canonical standard base64.
// It refuses the CR and LF that encoding/base64 would otherwise skip silently.
func decodePrefixed(encoded, prefix string) ([]byte, error) {
	body, ok := strings.CutPrefix(encoded, prefix)
	if !ok {
		return nil, fmt.Errorf("%w: want prefix %q", ErrMalformedSecret, prefix)
	}
	if body == "" || strings.ContainsAny(body, "\r\n") {
		return nil, fmt.Errorf("%w: %s value is empty or has line breaks", ErrMalformedSecret, prefix)
	}
	raw, err := canonicalBase64.DecodeString(body)
	if err != nil {
		return nil, fmt.Errorf("%w: %s value is not standard base64: %v", ErrMalformedSecret, prefix, err)
	}
	return raw, nil
}
