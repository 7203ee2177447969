package sqlrows

import (
	"errors"
	"slices"
	"testing"
)

// fakeRows is a result of one text column; closed counts Close calls.
type fakeRows struct {
	values []string
	next   int
	closed int
	err    error
}

func (r *fakeRows) Next() bool { r.next++; return r.next <= len(r.values) }

func (r *fakeRows) Scan(dest ...any) error {
	*dest[0].(*string) = r.values[r.next-1]
	return nil
}

func (r *fakeRows) Err() error { return r.err }

func (r *fakeRows) Close() { r.closed++ }

// Collect appends every row to what it was given and closes the rows; a query error
// comes back as it is, without reading.
func TestCollect(t *testing.T) {
	rows := &fakeRows{values: []string{"a", "b"}}
	got, err := Collect([]string{}, rows, nil, String)
	if err != nil || !slices.Equal(got, []string{"a", "b"}) || rows.closed != 1 {
		t.Fatalf("Collect: %q, %v, closed %d", got, err, rows.closed)
	}
	if got, err := Collect(nil, &fakeRows{}, nil, String); err != nil || got != nil {
		t.Fatalf("empty result with nil: %q, %v; want nil", got, err)
	}
	if got, err := Collect([]string{}, &fakeRows{}, nil, String); err != nil || got == nil || len(got) != 0 {
		t.Fatalf("empty result with []: %q, %v; want []", got, err)
	}
	queryErr := errors.New("query failed")
	if _, err := Collect(nil, nil, queryErr, String); err != queryErr {
		t.Fatalf("query error: %v", err)
	}
	readErr := errors.New("connection lost")
	if _, err := Collect(nil, &fakeRows{values: []string{"a"}, err: readErr}, nil, String); err != readErr {
		t.Fatalf("read error: %v", err)
	}
}

// First is the first row, or the caller's error when there is none.
func TestFirst(t *testing.T) {
	none := errors.New("none")
	if v, err := First(&fakeRows{values: []string{"a", "b"}}, nil, String, none); err != nil || v != "a" {
		t.Fatalf("First: %q, %v", v, err)
	}
	if _, err := First(&fakeRows{}, nil, String, none); err != none {
		t.Fatalf("no row: %v; want none", err)
	}
}

type pairScan struct{ a string }

func (p *pairScan) Dest() []any { return []any{&p.a} }

func (p *pairScan) Value() (string, error) { return "<" + p.a + ">", nil }

// Scan reads a row through a fresh buffer and returns the buffer's value.
func TestScan(t *testing.T) {
	rows := &fakeRows{values: []string{"x"}}
	rows.Next()
	if v, err := Scan[string, pairScan](rows); err != nil || v != "<x>" {
		t.Fatalf("Scan: %q, %v", v, err)
	}
}
