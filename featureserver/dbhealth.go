package featureserver

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"modernc.org/sqlite"

	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore/sqlitenode"
)

// writeFailureWindow is how long a failed write keeps /readyz at 503 after it (unless
// a later write succeeds): a full disk shows in the writes that grow the file, which
// the probe's rewrite of one row may not.
const writeFailureWindow = 10 * time.Second

// dbHealth watches whether the node's SQLite database can be written, for /readyz:
// the file at the path is still the one the node opened (not deleted, not replaced by
// another), the process may write it, a write probe commits, and no write of the
// node failed in the last writeFailureWindow. It is the sqlitenode.Writer of the
// node's store: every write of the store passes through it on the outbox's writer.
type dbHealth struct {
	path  string
	file  os.FileInfo // the file opened at start
	w     sqlitenode.Writer
	probe func(ctx context.Context) error
	// probeTimeout bounds the write probe, so that /readyz answers while the writer
	// is stuck (a probe that has not committed by then is a failure).
	probeTimeout time.Duration
	now          func() time.Time

	// log receives the start of a problem (error) and its end (info), once each.
	log zerolog.Logger

	mu       sync.Mutex
	lastFail time.Time
	lastErr  error
	failing  bool // the last check found a problem
}

func newDBHealth(path string, w sqlitenode.Writer) (*dbHealth, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("the database file %s: %w", path, err)
	}
	return &dbHealth{path: path, file: fi, w: w, probeTimeout: 2 * time.Second, now: time.Now}, nil
}

// probing marks the context of the write probe, whose success proves less than a
// real write's (it grows nothing) and so clears no failure.
type probing struct{}

// WriteTx runs fn on the writer and notes a failure of the database itself, or a
// success that clears it.
func (h *dbHealth) WriteTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	err := h.w.WriteTx(ctx, fn)
	h.note(err, ctx.Value(probing{}) != nil)
	return err
}

func (h *dbHealth) note(err error, probe bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case err == nil && !probe:
		h.lastErr = nil
	case databaseFault(err):
		h.lastFail, h.lastErr = h.now(), err
	}
}

// databaseFault reports whether err says the database cannot be written (read-only,
// I/O error, full, gone, corrupt), as opposed to a constraint, a missing row or a
// context that ended.
func databaseFault(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code() & 0xff {
	case 8 /* READONLY */, 10 /* IOERR */, 11 /* CORRUPT */, 13 /* FULL */, 14 /* CANTOPEN */, 26 /* NOTADB */ :
		return true
	}
	return false
}

// problem returns why the database cannot be written now, or nil: admit's checks
// and a write probe. /readyz asks it.
func (h *dbHealth) problem(ctx context.Context) error {
	err := h.check(ctx, true)
	h.report(err)
	return err
}

// admit returns why a new call may not start, or nil: the file deleted, replaced or
// not writable, or a write failing in the last writeFailureWindow (the probe of
// /readyz notes its failures too). It writes nothing, so it is cheap enough to ask
// on every call; the call's own first write is the probe.
func (h *dbHealth) admit() error {
	err := h.check(context.Background(), false)
	h.report(err)
	return err
}

// report logs the start of a problem at error and its end at info, once each, so
// a node that is up but losing its writes says so without a line per request.
func (h *dbHealth) report(err error) {
	h.mu.Lock()
	was := h.failing
	h.failing = err != nil
	h.mu.Unlock()
	switch {
	case err != nil && !was:
		h.log.Error().Err(err).Str("path", h.path).Msg("the node's database cannot be written: new calls are refused and /readyz answers 503 until it can")
	case err == nil && was:
		h.log.Info().Str("path", h.path).Msg("the node's database can be written again: new calls are accepted")
	}
}

func (h *dbHealth) check(ctx context.Context, probe bool) error {
	fi, err := os.Stat(h.path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("the database file %s was deleted: the node's writes would be lost; restore it or restart the node", h.path)
	case err != nil:
		return fmt.Errorf("the database file %s: %w", h.path, err)
	case !os.SameFile(fi, h.file):
		return fmt.Errorf("the database file %s was replaced by another file: restart the node", h.path)
	}
	if err := writable(h.path); err != nil {
		return err
	}
	if probe && h.probe != nil {
		pctx, cancel := context.WithTimeout(context.WithValue(ctx, probing{}, true), h.probeTimeout)
		defer cancel()
		if err := h.probe(pctx); err != nil && ctx.Err() == nil {
			return fmt.Errorf("the database %s cannot be written: %w", h.path, err)
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.lastErr != nil && h.now().Sub(h.lastFail) < writeFailureWindow {
		return fmt.Errorf("a write to the database %s failed %s ago: %w", h.path, h.now().Sub(h.lastFail).Round(time.Second), h.lastErr)
	}
	return nil
}
