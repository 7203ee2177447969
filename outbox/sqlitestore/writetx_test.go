package sqlitestore_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
	"github.com/switchboard-voice/switchboard/outbox/sqlitestore"
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

// OnWrite hears the outcome of every write through the writer, the outbox's own
// and WriteTx's, with the writer's context, and whether a write that succeeded
// changed rows: a claim that finds no work changes none.
func TestOnWriteHearsEveryWrite(t *testing.T) {
	t.Parallel()
	type key struct{}
	var (
		mu      sync.Mutex
		errs    []error
		changed []bool
		ctxs    int
	)
	st, err := sqlitestore.Open(context.Background(), filepath.Join(t.TempDir(), "outbox.db"), sqlitestore.Options{
		OnWrite: func(ctx context.Context, ch bool, err error) {
			mu.Lock()
			defer mu.Unlock()
			errs, changed = append(errs, err), append(changed, ch)
			if ctx.Value(key{}) != nil {
				ctxs++
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.WithValue(context.Background(), key{}, true)
	boom := errors.New("boom")
	_ = st.WriteTx(ctx, func(*sql.Tx) error { return nil })
	_ = st.WriteTx(ctx, func(*sql.Tx) error { return boom })
	if err := st.CreateEndpoint(ctx, outboxdriver.CreateEndpointParams{Endpoint: outboxdriver.Endpoint{ID: "ep", Account: "a", URL: "https://x.example/",
		Events: []string{"*"}, Profile: "standard", Status: outboxdriver.EndpointActive, CreatedAt: time.Now()},
		Audit: outboxdriver.AuditEntry{EndpointID: "ep", Account: "a", Action: "endpoint.created", At: time.Now()}}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Claim(ctx, outboxdriver.ClaimParams{Limit: 10, Now: time.Now(), LeaseUntil: time.Now().Add(time.Minute), Token: "t"}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(errs) != 4 || errs[0] != nil || !errors.Is(errs[1], boom) || errs[2] != nil || errs[3] != nil || ctxs != 4 {
		t.Fatalf("OnWrite heard %v (%d with the caller's context), want nil, boom, nil, nil", errs, ctxs)
	}
	if fmt.Sprint(changed) != "[false false true false]" {
		t.Errorf("changed rows %v, want only the endpoint's write", changed)
	}
}
