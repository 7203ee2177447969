package pgstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// Wake-ups (docs/outbox.md §5): a publish that stored deliveries another node may claim
// sends pg_notify on the schema's channel in its transaction, so that it arrives when
// (and only if) the transaction commits; every Store LISTENs on one connection of its
// own and passes each notification to the dispatchers that subscribed (Wakeups).
// Dispatchers poll all the same, so a notification lost with a connection costs a
// poll interval at most.

// channelOf is the notification channel of schema: one per schema, so that stores in
// other schemas (tests running in parallel) do not wake each other.
func channelOf(schema string) string {
	name := schema + ".outbox"
	if len(name) > 63 { // the longest identifier PostgreSQL keeps
		sum := sha256.Sum256([]byte(schema))
		name = "outbox_" + hex.EncodeToString(sum[:16])
	}
	return name
}

// sendWakeup notifies the schema's channel within q's transaction.
func (s *Store) sendWakeup(ctx context.Context, q querier) error {
	_, err := q.exec(ctx, `SELECT pg_notify($1, '')`, s.channel)
	return err
}

// notifyLimiter lets a publish notify when the last notification this store sent is
// older than cooldown (river's notifylimiter).
type notifyLimiter struct {
	cooldown time.Duration
	mu       sync.Mutex
	last     time.Time
}

func (l *notifyLimiter) due() bool {
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cooldown > 0 && now.Sub(l.last) < l.cooldown {
		return false
	}
	l.last = now
	return true
}

// waker passes notifications to subscribers, without blocking: a subscriber that has
// one waiting gets no second.
type waker struct {
	mu   sync.Mutex
	subs map[chan struct{}]struct{}
	// listening receives, without blocking, each time the listener has (re)started
	// listening: tests wait on it.
	listening chan struct{}
}

func newWaker() *waker {
	return &waker{subs: map[chan struct{}]struct{}{}, listening: make(chan struct{}, 1)}
}

func (w *waker) broadcast() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for ch := range w.subs {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// Wakeups implements outboxdriver.Waker: the channel receives when deliveries may
// have been published by any process sharing the schema (their transaction
// committed), and once when the listener lost its connection (notifications may have
// been missed meanwhile), until ctx ends. It is never closed.
func (s *Store) Wakeups(ctx context.Context) <-chan struct{} {
	ch := make(chan struct{}, 1)
	w := s.wake
	w.mu.Lock()
	w.subs[ch] = struct{}{}
	w.mu.Unlock()
	context.AfterFunc(ctx, func() {
		w.mu.Lock()
		delete(w.subs, ch)
		w.mu.Unlock()
	})
	return ch
}

// listen keeps a connection LISTENing on the schema's channel until ctx ends, and
// connects again, after a pause growing to 5 s, when it is lost.
func (s *Store) listen(ctx context.Context) {
	pause := 100 * time.Millisecond
	for ctx.Err() == nil {
		err := s.listenOnce(ctx, func() { pause = 100 * time.Millisecond })
		if ctx.Err() != nil {
			return
		}
		s.opts.Logger.Warn().Err(err).Dur("retry_in", pause).Msg("pgstore: wake-up listener lost the database; dispatchers poll meanwhile")
		s.wake.broadcast() // what was published meanwhile is found by a claim
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		pause = min(2*pause, 5*time.Second)
	}
}

// listenOnce listens on one connection until it fails or ctx ends; listening is
// called once LISTEN is in place.
func (s *Store) listenOnce(ctx context.Context, listening func()) error {
	cfg := s.pool.Config().ConnConfig.Copy()
	if cfg.RuntimeParams == nil {
		cfg.RuntimeParams = map[string]string{}
	}
	cfg.RuntimeParams["application_name"] = "switchboard-outbox-listener"
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return err
	}
	defer func() {
		closeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		defer cancel()
		_ = conn.Close(closeCtx)
	}()
	if _, err := conn.Exec(ctx, `LISTEN `+pgx.Identifier{s.channel}.Sanitize()); err != nil {
		return err
	}
	listening()
	select {
	case s.wake.listening <- struct{}{}:
	default:
	}
	for {
		if _, err := conn.WaitForNotification(ctx); err != nil {
			return err
		}
		s.wake.broadcast()
	}
}
