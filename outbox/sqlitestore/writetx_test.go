package sqlitestore_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// WriteTx runs a program's own writes on the store's writer: concurrent ones commit
// together, one that fails leaves nothing of its writes and fails alone. The file is
// created 0600.
func TestWriteTxSharesTheWriter(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "outbox.db")
	st := open(t, path)
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("%s: %v, %v; want mode 0600", path, fi.Mode().Perm(), err)
	}
	ctx := context.Background()
	if err := st.WriteTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.Exec(`CREATE TABLE mine (k INTEGER PRIMARY KEY)`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	var wg sync.WaitGroup
	errs := make([]error, 20)
	for i := range 20 {
		wg.Go(func() {
			errs[i] = st.WriteTx(ctx, func(tx *sql.Tx) error {
				if _, err := tx.Exec(`INSERT INTO mine(k) VALUES (?)`, i); err != nil {
					return err
				}
				if i%5 == 0 {
					return boom
				}
				return nil
			})
		})
	}
	wg.Wait()
	for i, err := range errs {
		if want := i%5 == 0; want != errors.Is(err, boom) || !want && err != nil {
			t.Errorf("write %d: %v", i, err)
		}
	}
	var n int
	if err := st.DB().QueryRow(`SELECT count(*) FROM mine`).Scan(&n); err != nil || n != 16 {
		t.Errorf("%d rows (%v), want the 16 writes that succeeded", n, err)
	}
}
