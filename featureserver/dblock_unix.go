//go:build unix

package featureserver

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
)

// lockDatabase takes the node's exclusive lock on the SQLite file at path: an flock
// on PATH.lock, made (mode 0600) beside it, held until release. A second node on the
// same file is refused here, before it opens, migrates or recovers anything, with a
// message naming the process that holds the lock. The kernel drops the lock when
// its holder dies, so a crash leaves nothing to clean up.
func lockDatabase(path string) (*databaseLock, error) {
	name := path + ".lock"
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("locking the database %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder, _ := os.ReadFile(name)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			who := "another process"
			if pid := strings.TrimSpace(string(holder)); pid != "" {
				who = "process " + pid
			}
			return nil, fmt.Errorf("%w: the database %s is in use by %s (it holds %s): one node per SQLite file; stop that node or give this one another --database-url",
				ErrDatabaseInUse, path, who, name)
		}
		return nil, fmt.Errorf("locking the database %s: %w", path, err)
	}
	// Who holds it, for the message of the next node refused.
	if err := f.Truncate(0); err == nil {
		_, _ = fmt.Fprintf(f, "%d\n", os.Getpid())
	}
	return &databaseLock{f: f}, nil
}

// databaseLock is a held lockDatabase.
type databaseLock struct{ f *os.File }

// release drops the lock; the file stays (removing it would let a third node lock a
// new file while a second still waits on the old one).
func (l *databaseLock) release() {
	if l != nil && l.f != nil {
		_ = l.f.Close()
		l.f = nil
	}
}

// writable reports why the file at path cannot be written by this process, or nil.
func writable(path string) error {
	if err := syscall.Access(path, 2 /* W_OK */); err != nil {
		return fmt.Errorf("the database file %s is not writable: %w", path, err)
	}
	return nil
}

// freeBytes is the space the file system holding path has left for the node.
func freeBytes(path string) (uint64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return 0, err
	}
	return uint64(st.Bavail) * uint64(st.Bsize), nil // the fields' types vary by platform
}
