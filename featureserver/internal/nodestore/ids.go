package nodestore

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"

	"github.com/google/uuid"
)

// NewSid returns a fresh identifier of an account, application or call (a random
// UUID, as jambonz's sids are).
func NewSid() string { return uuid.NewString() }

// NewSecret returns a random secret of n bytes, URL-safe base64: API tokens (32
// bytes) and webhook secrets (24 bytes).
func NewSecret(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	return base64.RawURLEncoding.EncodeToString(b)
}

// HashToken is what a store keeps of an API token, and what it is looked up by: a
// leaked database does not give the tokens away.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}
