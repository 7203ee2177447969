package pgnode_test

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"go.uber.org/goleak"

	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore"
	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore/nodestoretest"
	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore/pgnode"
	"github.com/switchboard-voice/switchboard/internal/pgtest"
	"github.com/switchboard-voice/switchboard/internal/secretbox"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func open(t *testing.T, dbURL string) *pgnode.Store {
	t.Helper()
	s, err := pgnode.OpenURL(context.Background(), dbURL, pgnode.Options{MaxConns: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// The same suite as sqlitenode's, each test in a schema of its own.
func TestConformance(t *testing.T) {
	pgtest.Require(t)
	nodestoretest.Run(t, func(t *testing.T) nodestore.Store {
		dbURL, _ := pgtest.Schema(t)
		return open(t, dbURL)
	})
}

// Nodes opening one empty schema at once migrate it once: each migration is recorded
// once and all of them open.
func TestOpenConcurrently(t *testing.T) {
	t.Parallel()
	dbURL, _ := pgtest.Schema(t)
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := pgnode.OpenURL(context.Background(), dbURL, pgnode.Options{MaxConns: 2})
			if err == nil {
				s.Close()
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	conn, err := pgx.Connect(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var recorded, distinct int
	if err := conn.QueryRow(context.Background(), `SELECT count(*), count(DISTINCT version) FROM node_migrations`).Scan(&recorded, &distinct); err != nil {
		t.Fatal(err)
	}
	if recorded != distinct || recorded == 0 {
		t.Fatalf("%d migrations recorded, %d distinct", recorded, distinct)
	}
}

func TestOpenURLRefusesABadURL(t *testing.T) {
	t.Parallel()
	if s, err := pgnode.OpenURL(context.Background(), "postgres://%zz", pgnode.Options{}); err == nil {
		s.Close()
		t.Fatal("opened a store at a bad URL")
	}
}

// Nodes purging one schema at once each delete a bounded batch at a time, never an
// error or a wait on each other's: together they remove every expired record once,
// and keep the active and recent ones.
func TestPurgeCallsOnSeveralNodesAtOnce(t *testing.T) {
	t.Parallel()
	dbURL, _ := pgtest.Schema(t)
	ctx := context.Background()
	seed := open(t, dbURL)
	now := time.Now().UTC()
	const expired, limit = 300, 7
	for i := range expired {
		c := nodestore.Call{CallSid: "old" + strconv.Itoa(i), AccountSid: "a", CreatedAt: now.Add(-time.Hour - time.Duration(i)*time.Millisecond)}
		if err := seed.SaveCall(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []nodestore.Call{{CallSid: "old-active", AccountSid: "a", Active: true, CreatedAt: now.Add(-2 * time.Hour)},
		{CallSid: "recent", AccountSid: "a", CreatedAt: now}} {
		if err := seed.SaveCall(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	removed := make(chan int, 4)
	errs := make(chan error, 4)
	for range 4 {
		node := open(t, dbURL)
		wg.Add(1)
		go func() {
			defer wg.Done()
			total := 0
			for {
				n, err := node.PurgeCalls(ctx, nodestore.PurgeCallsParams{Before: now.Add(-time.Minute), Limit: limit})
				if err != nil {
					errs <- err
					return
				}
				if n > limit {
					errs <- fmt.Errorf("a batch of %d, over the limit %d", n, limit)
					return
				}
				if n == 0 {
					removed <- total
					return
				}
				total += n
			}
		}()
	}
	wg.Wait()
	close(errs)
	close(removed)
	for err := range errs {
		t.Fatal(err)
	}
	sum := 0
	for n := range removed {
		sum += n
	}
	if sum != expired {
		t.Fatalf("the nodes purged %d records together, want %d", sum, expired)
	}
	left, err := seed.ListCalls(ctx, nodestore.ListCallsParams{AccountSid: "a", Limit: 10})
	if err != nil || len(left) != 2 {
		t.Fatalf("left after the purge: %d calls (%v), want the active and the recent one", len(left), err)
	}
}

// With a key, no row of the schema holds a secret in clear; rotation keeps them
// readable.
func TestSecretsAtRest(t *testing.T) {
	t.Parallel()
	dbURL, _ := pgtest.Schema(t)
	nodestoretest.RunSecrets(t, func(t *testing.T, k *secretbox.Keyring) nodestoretest.SecretStore {
		s, err := pgnode.OpenURL(context.Background(), dbURL, pgnode.Options{MaxConns: 2, Secrets: k})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}, func(t *testing.T) []byte {
		conn, err := pgx.Connect(context.Background(), dbURL)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(context.Background())
		var all []byte
		for _, table := range append([]string{"fs_accounts"}, nodestore.AccountTables...) {
			rows, err := conn.Query(context.Background(), `SELECT t::text FROM `+table+` t`)
			if err != nil {
				t.Fatal(err)
			}
			texts, err := pgx.CollectRows(rows, pgx.RowTo[string])
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range texts {
				all = append(all, s...)
			}
		}
		return all
	})
}
