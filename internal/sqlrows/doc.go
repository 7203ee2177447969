// Package sqlrows reads query results alike whatever the driver: the SQLite stores
// read database/sql's rows, the PostgreSQL stores pgx's, and both have the methods
// below.
package sqlrows
