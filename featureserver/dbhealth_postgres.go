package featureserver

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// pgWrites tells a node's database health of every statement its PostgreSQL pool
// runs (pgx's tracers, on every connection of the pool): a statement that failed
// for the database's sake (postgresFault) starts or extends a problem, as a failed
// write of the SQLite writer does (docs/security.md §3); a write that changed rows
// ends one. Reads that succeed prove nothing about writes and are not told: a full
// disk still serves them.
type pgWrites struct{ health *dbHealth }

var (
	_ pgx.QueryTracer   = pgWrites{}
	_ pgx.BatchTracer   = pgWrites{}
	_ pgx.ConnectTracer = pgWrites{}
)

func (w pgWrites) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	return ctx
}

func (w pgWrites) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryEndData) {
	w.note(ctx, d.CommandTag, d.Err)
}

func (w pgWrites) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	return ctx
}

func (w pgWrites) TraceBatchQuery(ctx context.Context, _ *pgx.Conn, d pgx.TraceBatchQueryData) {
	w.note(ctx, d.CommandTag, d.Err)
}

func (w pgWrites) TraceBatchEnd(ctx context.Context, _ *pgx.Conn, d pgx.TraceBatchEndData) {
	w.note(ctx, pgconn.CommandTag{}, d.Err)
}

func (w pgWrites) TraceConnectStart(ctx context.Context, _ pgx.TraceConnectStartData) context.Context {
	return ctx
}

// TraceConnectEnd: a connection that cannot be made is a database gone.
func (w pgWrites) TraceConnectEnd(ctx context.Context, d pgx.TraceConnectEndData) {
	w.note(ctx, pgconn.CommandTag{}, d.Err)
}

func (w pgWrites) note(ctx context.Context, tag pgconn.CommandTag, err error) {
	switch {
	case err != nil:
		w.health.noteWrite(ctx, err) // counted when postgresFault says so
	case (tag.Insert() || tag.Update() || tag.Delete()) && tag.RowsAffected() > 0:
		w.health.noteWrite(ctx, nil)
	}
}

// postgresFault reports whether err says the PostgreSQL database cannot take the
// node's writes: the server's own refusals for want of resources (53: a full disk,
// out of memory, too many connections), of a read-only server (25006: a standby
// after a failover), of a server shutting down or starting (57P01-57P03), of an
// I/O or internal error (58, XX); and a connection lost or refused (08, the
// network). A constraint, a serialization conflict, a caller's context that ended
// are not.
func postgresFault(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		code := pe.Code
		return code == "25006" || strings.HasPrefix(code, "08") || strings.HasPrefix(code, "53") ||
			code == "57P01" || code == "57P02" || code == "57P03" || strings.HasPrefix(code, "58") || strings.HasPrefix(code, "XX")
	}
	var ce *pgconn.ConnectError
	var ne net.Error
	return errors.As(err, &ce) || errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, net.ErrClosed) || errors.Is(err, pgconn.ErrConnClosed)
}
