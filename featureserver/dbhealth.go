package featureserver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"modernc.org/sqlite"
)

// writeFailureWindow is how long a failed write keeps the database not writable
// after it (unless a later write succeeds): a full disk shows in the writes that
// grow the file, which the probe's rewrite of one row may not.
const writeFailureWindow = 10 * time.Second

// probeInterval is how often a node probes whether its database takes writes.
const probeInterval = 5 * time.Second

// minFreeBytes is the least space the SQLite file's file system must have left:
// below it the database is full for the node's purposes, before SQLite's own
// writes start failing half-way through a group of them.
const minFreeBytes = 1 << 20

// PublicNotWritable is what /readyz says while the database cannot be written:
// the details (a path, the driver's error) go to the log only.
const PublicNotWritable = "database not writable"

// dbHealth watches whether the node's database can be written, for /readyz and
// for new calls: a write probe every probeInterval (on SQLite also the file at the
// path being the one the node opened, writable, on a file system with space left),
// and every write of the node (on SQLite: the single writer's, outbox and node
// store alike) that fails for the database's sake. The start of a problem is logged
// once at error, its end once at info.
type dbHealth struct {
	// probe checks that a write can be made now; files, when set (SQLite), makes
	// the checks of the file that need no write.
	probe func(ctx context.Context) error
	files func() error
	// fault tells a write's error that says the database cannot be written (full,
	// read-only, gone) from one that does not (a constraint, a caller's context):
	// sqliteFault or postgresFault.
	fault func(error) bool
	// probeTimeout bounds a probe: one that has not committed by then is a failure.
	probeTimeout time.Duration
	interval     time.Duration
	now          func() time.Time
	// probed, when set (tests), is told each probe's outcome once it is recorded.
	probed func(error)
	log    zerolog.Logger

	mu       sync.Mutex
	probeErr error // the last probe's
	lastFail time.Time
	lastErr  error
	failing  bool // the last state reported
}

func newDBHealth(probe func(ctx context.Context) error, fault func(error) bool) *dbHealth {
	return &dbHealth{probe: probe, fault: fault, probeTimeout: 2 * time.Second, interval: probeInterval, now: time.Now}
}

// sqliteFiles returns the checks of the SQLite file at path, which must be the
// file opened now, that need no write: still there, the same file, writable, on a
// file system with space left.
func sqliteFiles(path string) (func() error, error) {
	opened, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("the database file %s: %w", path, err)
	}
	return func() error {
		fi, err := os.Stat(path)
		switch {
		case errors.Is(err, os.ErrNotExist):
			return fmt.Errorf("the database file %s was deleted: the node's writes would be lost; restore it or restart the node", path)
		case err != nil:
			return fmt.Errorf("the database file %s: %w", path, err)
		case !os.SameFile(fi, opened):
			return fmt.Errorf("the database file %s was replaced by another file: restart the node", path)
		}
		if err := writable(path); err != nil {
			return err
		}
		if free, err := freeBytes(path); err == nil && free < minFreeBytes {
			return fmt.Errorf("the file system of the database %s is full (%d bytes left)", path, free)
		}
		return nil
	}, nil
}

// probing marks the context of the write probe, whose success proves less than a
// real write's (it grows nothing) and so clears no failure.
type probing struct{}

// noteWrite records the outcome of one of the node's writes: a failure of the
// database itself starts (or extends) a problem, a success that is not the
// probe's ends one.
func (h *dbHealth) noteWrite(ctx context.Context, err error) {
	h.mu.Lock()
	switch {
	case err == nil && h.lastErr == nil:
		h.mu.Unlock() // the common case, on every write: nothing changes
		return
	case err == nil && ctx.Value(probing{}) == nil:
		h.lastErr = nil
	case h.fault(err):
		h.lastFail, h.lastErr = h.now(), err
	default:
		h.mu.Unlock()
		return
	}
	h.mu.Unlock()
	h.report(h.state())
}

// sqliteFault reports whether err says the SQLite database cannot be written
// (read-only, I/O error, full, gone, corrupt), as opposed to a constraint, a missing
// row or a context that ended.
func sqliteFault(err error) bool {
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

// run probes at once and then every interval until ctx ends.
func (h *dbHealth) run(ctx context.Context) {
	t := time.NewTicker(h.interval)
	defer t.Stop()
	for {
		h.probeNow(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// probeNow runs one probe and records its outcome, unless ctx ended meanwhile.
func (h *dbHealth) probeNow(ctx context.Context) {
	err := h.check(ctx)
	if ctx.Err() != nil {
		return
	}
	h.mu.Lock()
	h.probeErr = err
	h.mu.Unlock()
	h.report(h.state())
	if h.probed != nil {
		h.probed(err)
	}
}

// check is one probe: the file's checks, then a write.
func (h *dbHealth) check(ctx context.Context) error {
	if h.files != nil {
		if err := h.files(); err != nil {
			return err
		}
	}
	pctx, cancel := context.WithTimeout(context.WithValue(ctx, probing{}, true), h.probeTimeout)
	defer cancel()
	if err := h.probe(pctx); err != nil {
		return fmt.Errorf("the database cannot be written: %w", err)
	}
	return nil
}

// state returns why the database cannot be written now, or nil: the last probe's
// failure, or a write that failed in the last writeFailureWindow.
func (h *dbHealth) state() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.probeErr != nil {
		return h.probeErr
	}
	if h.lastErr != nil && h.now().Sub(h.lastFail) < writeFailureWindow {
		return fmt.Errorf("a write to the database failed %s ago: %w", h.now().Sub(h.lastFail).Round(time.Second), h.lastErr)
	}
	return nil
}

// ready is what /readyz asks: the state the probes and writes left, with no write
// of its own (an anonymous caller makes the node write nothing).
func (h *dbHealth) ready() error {
	err := h.state()
	h.report(err)
	return err
}

// admit returns why a new call may not start, or nil: the file's checks (deleted,
// replaced, not writable, full) and the state. It writes nothing, so it is cheap
// enough to ask on every call; the call's own first write is the probe.
func (h *dbHealth) admit() error {
	err := h.state()
	if err == nil && h.files != nil {
		err = h.files()
	}
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
		h.log.Error().Err(err).Msg("the node's database cannot be written: new calls are refused and /readyz answers 503 until it can")
	case err == nil && was:
		h.log.Info().Msg("the node's database can be written again: new calls are accepted and /readyz answers 200")
	}
}
