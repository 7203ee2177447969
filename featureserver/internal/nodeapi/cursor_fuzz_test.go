package nodeapi

import (
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore"
)

// A cursor is outside input: whatever a client sends either is refused or names a
// place that encodes back to a cursor naming the same place; a cursor the API
// wrote reads back as the place it was written for.
func FuzzDecodeCursor(f *testing.F) {
	f.Add(encodeCursor(nodestore.CallKey{CreatedAt: time.UnixMilli(1764590400123), Sid: "0b7e4f5e-3c1a-4d9e-9a51-2f6f2b1c9d00"}))
	f.Add("zzz")
	f.Add("")
	f.Add("MTIzLg")
	f.Add("LTEuYQ")
	f.Fuzz(func(t *testing.T, s string) {
		k, err := decodeCursor(s)
		if err != nil {
			return
		}
		if k.Sid == "" || k.CreatedAt.UnixMilli() < 0 {
			t.Fatalf("decodeCursor(%q) = %+v: an empty sid or a negative time got through", s, k)
		}
		again, err := decodeCursor(encodeCursor(k))
		if err != nil || again.Sid != k.Sid || !again.CreatedAt.Equal(k.CreatedAt) {
			t.Fatalf("%q read as %+v, re-encoded reads as %+v, %v", s, k, again, err)
		}
	})
}
