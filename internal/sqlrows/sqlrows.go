// Package sqlrows reads query results alike whatever the driver: the SQLite stores
// read database/sql's rows, the PostgreSQL stores pgx's, and both have the methods
// below.
package sqlrows

// Row is one row to scan: *sql.Row, *sql.Rows, pgx.Row and pgx.Rows are.
type Row interface {
	Scan(dest ...any) error
}

// Rows is a result being read: *sql.Rows and pgx.Rows are. Its caller closes it.
type Rows interface {
	Row
	Next() bool
	Err() error
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
