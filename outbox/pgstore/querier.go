package pgstore

import (
	"context"
	"database/sql"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// querier runs statements on a pgx transaction or pool, or on a caller's *sql.Tx
// (through pgx's database/sql driver, which hands arguments to pgx as they are): the
// store's statements and scans are written once for both.
type querier interface {
	exec(ctx context.Context, query string, args ...any) (int64, error)
	query(ctx context.Context, query string, args ...any) (rows, error)
	queryRow(ctx context.Context, query string, args ...any) row
}

type rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close()
}

type row interface{ Scan(dest ...any) error }

// pgxRunner is what pgx.Tx, *pgx.Conn and *pgxpool.Pool share.
type pgxRunner interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

type pgxQuerier struct{ r pgxRunner }

func (p pgxQuerier) exec(ctx context.Context, query string, args ...any) (int64, error) {
	tag, err := p.r.Exec(ctx, query, args...)
	return tag.RowsAffected(), err
}

func (p pgxQuerier) query(ctx context.Context, query string, args ...any) (rows, error) {
	return p.r.Query(ctx, query, args...)
}

func (p pgxQuerier) queryRow(ctx context.Context, query string, args ...any) row {
	return p.r.QueryRow(ctx, query, args...)
}

type sqlQuerier struct{ tx *sql.Tx }

func (s sqlQuerier) exec(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := s.tx.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (s sqlQuerier) query(ctx context.Context, query string, args ...any) (rows, error) {
	r, err := s.tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return sqlRows{r}, nil
}

func (s sqlQuerier) queryRow(ctx context.Context, query string, args ...any) row {
	return s.tx.QueryRowContext(ctx, query, args...)
}

// sqlRows is *sql.Rows with pgx's Close: its error shows in Err.
type sqlRows struct{ *sql.Rows }

func (r sqlRows) Close() { _ = r.Rows.Close() }
