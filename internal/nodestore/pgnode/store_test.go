package pgnode_test

import (
	"context"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"go.uber.org/goleak"

	"github.com/switchboard-voice/switchboard/internal/nodestore"
	"github.com/switchboard-voice/switchboard/internal/nodestore/nodestoretest"
	"github.com/switchboard-voice/switchboard/internal/nodestore/pgnode"
	"github.com/switchboard-voice/switchboard/internal/pgtest"
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
