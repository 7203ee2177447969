package ids

import (
	"crypto/rand"
	"encoding/hex"
	"time"
)

// New returns a random identifier with a type prefix ("evt_…"): visible ASCII
// without ".", as webhook-id requires.
func New(prefix string) string {
	// Time first (milliseconds, big-endian), then randomness: ids made close in time
	// sort together, so the store's primary-key indexes grow at their right edge and
	// a commit touches a few index pages instead of one per new row.
	var b [16]byte
	ms := uint64(time.Now().UnixMilli())
	for i := range 6 {
		b[i] = byte(ms >> (40 - 8*i))
	}
	_, _ = rand.Read(b[6:])
	return prefix + "_" + hex.EncodeToString(b[:])
}
