package migrate

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/pressly/goose/v3/lock"
)

// advisoryLock is goose's SessionLocker on PostgreSQL: a session advisory lock keyed by
// the connection's schema and the line's table, so that lines and schemas (a test's
// own) migrate independently. pg_advisory_lock waits on the server and returns as
// soon as the holder releases it (goose's own locker polls every 5 s); it ends with
// ctx, and with the session if the process dies.
type advisoryLock struct{ table string }

var _ lock.SessionLocker = advisoryLock{}

const lockKey = `hashtextextended(current_schema() || '.' || $1, 0)`

func (l advisoryLock) SessionLock(ctx context.Context, conn *sql.Conn) error {
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock(`+lockKey+`)`, l.table); err != nil {
		return fmt.Errorf("migrate: advisory lock: %w", err)
	}
	return nil
}

func (l advisoryLock) SessionUnlock(ctx context.Context, conn *sql.Conn) error {
	var released bool
	if err := conn.QueryRowContext(ctx, `SELECT pg_advisory_unlock(`+lockKey+`)`, l.table).Scan(&released); err != nil {
		return fmt.Errorf("migrate: advisory unlock: %w", err)
	}
	if !released {
		return fmt.Errorf("migrate: advisory lock of %s was not held", l.table)
	}
	return nil
}
