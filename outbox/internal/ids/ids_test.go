package ids

import (
	"slices"
	"strings"
	"testing"
)

// Ids carry their prefix, are unique, travel in webhook-id (visible ASCII, no ".")
// and sort by the time they were made, to the millisecond.
func TestNew(t *testing.T) {
	seen := map[string]bool{}
	var made []string
	for range 1000 {
		id := New("evt")
		if !strings.HasPrefix(id, "evt_") || len(id) != len("evt_")+32 || strings.ContainsAny(id, ". ") || seen[id] {
			t.Fatalf("id %q (seen before: %v)", id, seen[id])
		}
		seen[id] = true
		made = append(made, id[:len("evt_")+12]) // the time part
	}
	if !slices.IsSorted(made) {
		t.Fatal("ids made one after the other do not sort by time")
	}
}
