package dburl

import (
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// Drivers.
const (
	SQLite   = "sqlite"
	Postgres = "postgres"
)

// Location is a parsed database URL.
type Location struct {
	// Driver is SQLite or Postgres.
	Driver string
	// Path is the SQLite file.
	Path string
	// URL is the PostgreSQL connection URL, as given.
	URL string
}

// Error is a database URL that was refused.
type Error struct {
	Value  string
	Reason string
}

func (e *Error) Error() string {
	return fmt.Sprintf("database URL %q: %s", redact(e.Value), e.Reason)
}

// Parse parses v.
func Parse(v string) (Location, error) {
	bad := func(why string) (Location, error) { return Location{}, &Error{Value: v, Reason: why} }
	switch {
	case strings.HasPrefix(v, "postgres://"), strings.HasPrefix(v, "postgresql://"):
		if _, err := pgx.ParseConfig(v); err != nil {
			return bad("not a PostgreSQL connection URL: " + redact(err.Error()))
		}
		return Location{Driver: Postgres, URL: v}, nil
	case strings.HasPrefix(v, "sqlite://"):
		v = strings.TrimPrefix(v, "sqlite://")
	case strings.HasPrefix(v, "sqlite:"):
		v = strings.TrimPrefix(v, "sqlite:")
	case strings.HasPrefix(v, "file:"):
		v = strings.TrimPrefix(v, "file:")
	case strings.Contains(v, "://"):
		return bad("want sqlite:PATH, a file path, or postgres://...")
	}
	if strings.TrimSpace(v) == "" || strings.ContainsAny(v, "?\x00") {
		return bad("want sqlite:PATH with a non-empty file path and no query string")
	}
	return Location{Driver: SQLite, Path: v}, nil
}

// Redact hides a password in what is shown of a URL (a log line, a printed
// configuration): user:password@ becomes user:***@.
func Redact(s string) string { return redact(s) }

// redact hides a password in what is shown of a URL: user:password@ becomes
// user:***@.
func redact(s string) string {
	at := strings.LastIndex(s, "@")
	scheme := strings.Index(s, "://")
	if at < 0 || scheme < 0 || at < scheme {
		return s
	}
	userinfo := s[scheme+3 : at]
	if i := strings.Index(userinfo, ":"); i >= 0 {
		return s[:scheme+3] + userinfo[:i] + ":***" + s[at:]
	}
	return s
}
