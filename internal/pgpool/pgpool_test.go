package pgpool_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/switchboard-voice/switchboard/internal/pgpool"
	"github.com/switchboard-voice/switchboard/internal/pgtest"
)

// Connect names the pool's connections appName unless the URL names them itself, and
// bounds the pool at maxConns unless the URL's pool_max_conns does.
func TestConnectNamesAndBoundsThePool(t *testing.T) {
	pgtest.Require(t)
	t.Setenv("PGAPPNAME", "") // pgx would name the connections after it
	if base := pgtest.URL(); strings.Contains(base, "application_name=") || strings.Contains(base, "pool_max_conns=") {
		t.Skipf("the test database's URL sets application_name or pool_max_conns itself: %s", pgtest.EnvURL)
	}
	ctx := context.Background()
	sep := "?"
	if strings.Contains(pgtest.URL(), "?") {
		sep = "&"
	}
	for _, tc := range []struct {
		name, query, appName, wantName string
		maxConns, wantMax              int32
	}{
		{"ours", "", "switchboard-test", "switchboard-test", 3, 3},
		{"the URL's", "application_name=theirs&pool_max_conns=5", "switchboard-test", "theirs", 3, 5},
		{"none", "", "", "", 2, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := pgtest.URL()
			if tc.query != "" {
				url += sep + tc.query
			}
			pool, err := pgpool.Connect(ctx, url, tc.maxConns, tc.appName, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer pool.Close()
			var name string
			if err := pool.QueryRow(ctx, `SELECT current_setting('application_name')`).Scan(&name); err != nil {
				t.Fatal(err)
			}
			if name != tc.wantName {
				t.Errorf("application_name %q, want %q", name, tc.wantName)
			}
			if got := pool.Config().MaxConns; got != tc.wantMax {
				t.Errorf("MaxConns %d, want %d", got, tc.wantMax)
			}
		})
	}
}

// A URL that does not parse is a *URLError, and nothing connects.
func TestConnectRefusesABadURL(t *testing.T) {
	_, err := pgpool.Connect(context.Background(), "postgres://127.0.0.1:5432/test?pool_max_conns=many", 2, "x", nil)
	var bad *pgpool.URLError
	if !errors.As(err, &bad) {
		t.Fatalf("err %v, want a *pgpool.URLError", err)
	}
}
