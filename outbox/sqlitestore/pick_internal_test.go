package sqlitestore

import (
	"reflect"
	"testing"
)

// TestPickDue: the claim takes the window earliest first (ties by id), no more of an
// endpoint than its room, and no more than the limit; an endpoint over its room does
// not stop a later one.
func TestPickDue(t *testing.T) {
	window := []dueRow{
		{id: "d5", endpointID: "b", next: 3, room: 5},
		{id: "d2", endpointID: "a", next: 1, room: 2},
		{id: "d1", endpointID: "a", next: 1, room: 2},
		{id: "d3", endpointID: "a", next: 2, room: 2},
		{id: "d4", endpointID: "b", next: 2, room: 5},
		{id: "d6", endpointID: "c", next: 4, room: 1},
	}
	for _, tc := range []struct {
		limit int
		want  []string
	}{
		{10, []string{"d1", "d2", "d4", "d5", "d6"}},
		{3, []string{"d1", "d2", "d4"}},
		{1, []string{"d1"}},
	} {
		if got := pickDue(append([]dueRow(nil), window...), tc.limit); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("limit %d: picked %v, want %v", tc.limit, got, tc.want)
		}
	}
}
