package outboxapi

import "testing"

// FuzzCursor: a cursor decodes to the key it was made of, only in its own listing;
// anything a client sends decodes without panicking, and what decodes encodes back
// to a cursor of the same key.
func FuzzCursor(f *testing.F) {
	for _, s := range []string{"", "dlv_01ab", "call-status:CA1:2", "42", ":", "e:x", "ZDpkbHZfMQ", "%%%"} {
		f.Add(s)
	}
	kinds := []string{cursorEvents, cursorDeliveries, cursorAudit, cursorEndpoints}
	f.Fuzz(func(t *testing.T, s string) {
		for _, kind := range kinds {
			if key, ok := decodeCursor(kind, s); ok {
				if key == "" {
					t.Fatalf("%q decoded to an empty key", s)
				}
				if again, ok := decodeCursor(kind, encodeCursor(kind, key)); !ok || again != key {
					t.Fatalf("%q: key %q does not round-trip (%q %v)", s, key, again, ok)
				}
			}
			if s == "" {
				continue
			}
			c := encodeCursor(kind, s)
			if key, ok := decodeCursor(kind, c); !ok || key != s {
				t.Fatalf("cursor of %q decodes to %q %v", s, key, ok)
			}
			for _, other := range kinds {
				if _, ok := decodeCursor(other, c); ok != (other == kind) {
					t.Fatalf("a %s cursor decodes as a %s cursor: %v", kind, other, ok)
				}
			}
		}
	})
}
