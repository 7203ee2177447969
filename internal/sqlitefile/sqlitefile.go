package sqlitefile

import (
	"errors"

	"context"
	"database/sql"
	"fmt"
	"os"
	"strconv"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Create creates an empty database file at path with mode 0600 when none exists; an
// existing file is left as it is. SQLite gives the WAL and shared-memory files the
// database file's mode.
func Create(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	return f.Close()
}

// Prepare creates path as Create does and puts the database in WAL mode. A switch
// refused with SQLITE_BUSY because another connection is switching the same file
// (SQLite gives up on that lock at once, busy_timeout notwithstanding) is tried again
// with a growing pause for up to busyTimeout, or until ctx ends.
func Prepare(ctx context.Context, path string, busyTimeout time.Duration) error {
	if err := Create(path); err != nil {
		return err
	}
	// mode=rw: a file deleted since Create is an error, never a new one.
	db, err := sql.Open("sqlite", "file:"+path+"?mode=rw&_pragma=busy_timeout("+strconv.FormatInt(busyTimeout.Milliseconds(), 10)+")")
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(ctx, busyTimeout)
	defer cancel()
	for pause := time.Millisecond; ; pause = min(2*pause, 100*time.Millisecond) {
		var mode string
		err := db.QueryRowContext(ctx, "PRAGMA journal_mode=WAL").Scan(&mode)
		switch {
		case err == nil && mode == "wal":
			return nil
		case err == nil:
			return fmt.Errorf("%s: SQLite kept journal mode %q instead of wal", path, mode)
		case !isBusy(err):
			return fmt.Errorf("%s: switching to WAL: %w", path, err)
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%s: switching to WAL: %w (%w)", path, err, context.Cause(ctx))
		case <-t.C:
		}
	}
}

func isBusy(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_BUSY
}
