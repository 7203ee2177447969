// Package dburl parses a database URL (SWITCHBOARD_DATABASE_URL, `switchboard migrate
// --database-url`): a SQLite location (sqlite:PATH, sqlite://PATH, file:PATH or a plain
// path) or a PostgreSQL one (postgres://... or postgresql://..., checked by pgx without
// connecting; a search_path parameter chooses the schema). Bad input is an *Error
// saying what is accepted.
//
// It owns the syntax only: opening the database is the stores'.
package dburl
