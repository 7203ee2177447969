package secretbox

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// KeySize is the size of a key: AES-256.
const KeySize = 32

// prefix starts every sealed value.
const prefix = "sbx1:"

// ErrNoKey is the error of opening a sealed value without a Keyring.
var ErrNoKey = errors.New("secretbox: the secret is stored encrypted and no key is set")

// ErrUnknownKey is the error of opening a value sealed under a key the Keyring lacks.
var ErrUnknownKey = errors.New("secretbox: the secret is sealed under a key not given")

// ErrCorrupt is the error of opening a sealed value that does not authenticate:
// damaged, or moved from another row (the additional data differs).
var ErrCorrupt = errors.New("secretbox: the sealed secret does not authenticate")

type key struct {
	id   string
	aead cipher.AEAD
}

// Keyring seals with its first key and opens with any. Its methods are safe for
// concurrent use, on a nil *Keyring too.
type Keyring struct{ keys []key }

// New returns a Keyring of raw keys, the first sealing; each must be KeySize bytes.
func New(raw ...[]byte) (*Keyring, error) {
	if len(raw) == 0 {
		return nil, errors.New("secretbox: no key")
	}
	k := &Keyring{}
	seen := map[string]bool{}
	for i, r := range raw {
		if len(r) != KeySize {
			return nil, fmt.Errorf("secretbox: key %d is %d bytes, want %d", i+1, len(r), KeySize)
		}
		block, err := aes.NewCipher(r)
		if err != nil {
			return nil, err
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, err
		}
		sum := sha256.Sum256(append([]byte("switchboard secrets key id\x00"), r...))
		id := hex.EncodeToString(sum[:4])
		if seen[id] {
			return nil, fmt.Errorf("secretbox: key %d is given twice", i+1)
		}
		seen[id] = true
		k.keys = append(k.keys, key{id: id, aead: aead})
	}
	return k, nil
}

// Parse reads a comma-separated list of keys, each the standard or URL-safe base64
// of KeySize bytes (openssl rand -base64 32), the first sealing. An empty list is a
// nil Keyring: secrets in clear. Its errors never show a key.
func Parse(v string) (*Keyring, error) {
	var raw [][]byte
	for i, item := range strings.Split(v, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		b, err := decodeKey(item)
		if err != nil || len(b) != KeySize {
			return nil, fmt.Errorf("key %d is not the base64 of %d bytes (make one with: openssl rand -base64 32)", i+1, KeySize)
		}
		raw = append(raw, b)
	}
	if len(raw) == 0 {
		return nil, nil
	}
	return New(raw...)
}

func decodeKey(s string) ([]byte, error) {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return b, nil
		}
	}
	return nil, errors.New("not base64")
}

// NewKey returns a fresh random key, in the form Parse reads.
func NewKey() string {
	b := make([]byte, KeySize)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	return base64.StdEncoding.EncodeToString(b)
}

// Enabled reports whether secrets are sealed (a key is set).
func (k *Keyring) Enabled() bool { return k != nil && len(k.keys) > 0 }

// Keys is how many keys k holds.
func (k *Keyring) Keys() int {
	if k == nil {
		return 0
	}
	return len(k.keys)
}

// Seal returns plain sealed under the first key, bound to where (the place it is
// kept: table, column, row); without a key, or for an empty secret, plain itself.
func (k *Keyring) Seal(plain, where string) (string, error) {
	if !k.Enabled() || plain == "" {
		return plain, nil
	}
	c := k.keys[0]
	nonce := make([]byte, c.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	out := c.aead.Seal(nonce, nonce, []byte(plain), []byte(where))
	return prefix + c.id + ":" + base64.RawURLEncoding.EncodeToString(out), nil
}

// Sealed reports whether stored is a sealed value.
func Sealed(stored string) bool { return strings.HasPrefix(stored, prefix) }

// Open returns the secret stored at where: a sealed value opened with the key that
// sealed it, a value in clear as it is. Errors: ErrNoKey, ErrUnknownKey, ErrCorrupt.
func (k *Keyring) Open(stored, where string) (string, error) {
	if !Sealed(stored) {
		return stored, nil
	}
	if !k.Enabled() {
		return "", ErrNoKey
	}
	id, body, ok := strings.Cut(strings.TrimPrefix(stored, prefix), ":")
	if !ok {
		return "", ErrCorrupt
	}
	for _, c := range k.keys {
		if c.id != id {
			continue
		}
		raw, err := base64.RawURLEncoding.DecodeString(body)
		if err != nil || len(raw) < c.aead.NonceSize() {
			return "", ErrCorrupt
		}
		n := c.aead.NonceSize()
		plain, err := c.aead.Open(nil, raw[:n], raw[n:], []byte(where))
		if err != nil {
			return "", ErrCorrupt
		}
		return string(plain), nil
	}
	return "", ErrUnknownKey
}

// Current reports whether stored needs no sealing again: sealed under the first
// key, or, without a key, in clear. Empty values need none.
func (k *Keyring) Current(stored string) bool {
	if stored == "" {
		return true
	}
	if !k.Enabled() {
		return !Sealed(stored)
	}
	return strings.HasPrefix(stored, prefix+k.keys[0].id+":")
}

// Reseal returns stored sealed under the first key (without a key: in clear),
// opening it first; changed says whether it differs from stored.
func (k *Keyring) Reseal(stored, where string) (out string, changed bool, err error) {
	if k.Current(stored) {
		return stored, false, nil
	}
	plain, err := k.Open(stored, where)
	if err != nil {
		return "", false, err
	}
	out, err = k.Seal(plain, where)
	return out, err == nil, err
}
