package dburl_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/switchboard-voice/switchboard/internal/dburl"
	"github.com/switchboard-voice/switchboard/internal/testkit"
)

// TestParse: a row per accepted and refused form.
func TestParse(t *testing.T) {
	for _, c := range []struct {
		in   string
		want dburl.Location
		ok   bool
	}{
		{"sqlite:switchboard.db", dburl.Location{Driver: dburl.SQLite, Path: "switchboard.db"}, true},
		{"sqlite:///var/lib/sb.db", dburl.Location{Driver: dburl.SQLite, Path: "/var/lib/sb.db"}, true},
		{"file:data/sb.db", dburl.Location{Driver: dburl.SQLite, Path: "data/sb.db"}, true},
		{"/tmp/sb.db", dburl.Location{Driver: dburl.SQLite, Path: "/tmp/sb.db"}, true},
		{"postgres://sb@db.example:5432/sb?sslmode=require", dburl.Location{Driver: dburl.Postgres, URL: "postgres://sb@db.example:5432/sb?sslmode=require"}, true},
		{"postgresql://sb:pw@127.0.0.1/sb?search_path=outbox", dburl.Location{Driver: dburl.Postgres, URL: "postgresql://sb:pw@127.0.0.1/sb?search_path=outbox"}, true},
		{"", dburl.Location{}, false},
		{"sqlite:", dburl.Location{}, false},
		{"sqlite:a.db?mode=memory", dburl.Location{}, false},
		{"mysql://x/y", dburl.Location{}, false},
		{"postgres://sb:secret@host:notaport/db", dburl.Location{}, false},
	} {
		got, err := dburl.Parse(c.in)
		if c.ok != (err == nil) || c.ok && got != c.want {
			t.Errorf("Parse(%q) = %+v, %v", c.in, got, err)
		}
		var de *dburl.Error
		if !c.ok && !errors.As(err, &de) {
			t.Errorf("Parse(%q): %T, want *dburl.Error", c.in, err)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("Parse(%q): the error shows the password: %v", c.in, err)
		}
	}
}

// FuzzParse: whatever the input, Parse does not panic, and what it accepts is a usable
// location: a SQLite path without a query or NUL, or a URL pgx parses; an error never
// shows a URL's password.
func FuzzParse(f *testing.F) {
	testkit.AddSeeds[string](f, "sqlite:a.db", "file:x", "/p", "postgres://u:pw@h/db", "postgresql://h/db?search_path=s", "x://y", "", ":pw@://u:pw@")
	f.Fuzz(func(t *testing.T, s string) {
		loc, err := dburl.Parse(s)
		if err != nil {
			// The credentials are what follows "://"; text before it is the scheme
			// (":pw@://u:pw@" keeps its first ":pw@", which is no password).
			if strings.Contains(s, "://u:pw@") && strings.Contains(err.Error(), "://u:pw@") {
				t.Fatalf("Parse(%q): the error shows the password: %v", s, err)
			}
			return
		}
		switch loc.Driver {
		case dburl.SQLite:
			if strings.TrimSpace(loc.Path) == "" || strings.ContainsAny(loc.Path, "?\x00") || loc.URL != "" {
				t.Fatalf("Parse(%q) = %+v", s, loc)
			}
		case dburl.Postgres:
			if _, err := pgx.ParseConfig(loc.URL); err != nil || loc.Path != "" {
				t.Fatalf("Parse(%q) = %+v: %v", s, loc, err)
			}
		default:
			t.Fatalf("Parse(%q): driver %q", s, loc.Driver)
		}
	})
}
