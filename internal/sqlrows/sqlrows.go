package sqlrows

// Row is one row to scan: *sql.Row, *sql.Rows, pgx.Row and pgx.Rows are.
type Row interface {
	Scan(dest ...any) error
}

// Rows is a result being read: *sql.Rows and pgx.Rows are.
type Rows interface {
	Row
	Next() bool
	Err() error
}

// Collect is Append of a query's result as the query returned it, rows and err, and
// closes rows (rows.Close of either driver). With err set there is nothing to close:
// database/sql returns no rows with an error, pgx rows already closed.
func Collect[T any](out []T, rows Rows, err error, scan func(Row) (T, error)) ([]T, error) {
	if err != nil {
		return nil, err
	}
	switch r := rows.(type) {
	case interface{ Close() error }: // *sql.Rows
		defer r.Close()
	case interface{ Close() }: // pgx.Rows
		defer r.Close()
	}
	return Append(out, rows, scan)
}

// First is the first row of a query's result (rows, err as the query returned them),
// read by scan; none when the result has no row.
func First[T any](rows Rows, err error, scan func(Row) (T, error), none error) (T, error) {
	var zero T
	all, err := Collect(nil, rows, err, scan)
	if err != nil {
		return zero, err
	}
	if len(all) == 0 {
		return zero, none
	}
	return all[0], nil
}

// Append appends each row of rows, read by scan, to out: a caller that lists an empty
// result as [] passes an empty slice, one that keeps nil passes nil.
func Append[T any](out []T, rows Rows, scan func(Row) (T, error)) ([]T, error) {
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// String scans a row of one text column.
func String(r Row) (string, error) {
	var s string
	err := r.Scan(&s)
	return s, err
}

// Buffer is a row type's scan buffer: Dest are the destinations of its columns, and
// Value is the row they make once scanned.
type Buffer[T any] interface {
	Dest() []any
	Value() (T, error)
}

// Scan reads r into a new buffer S and returns its Value.
func Scan[T, S any, B interface {
	*S
	Buffer[T]
}](r Row) (T, error) {
	var buf S
	b := B(&buf)
	if err := r.Scan(b.Dest()...); err != nil {
		var zero T
		return zero, err
	}
	return b.Value()
}
