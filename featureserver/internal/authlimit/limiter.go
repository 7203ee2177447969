package authlimit

import (
	"context"
	"math"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-voice/switchboard/retry"
)

// Rate is a budget of failures: Burst at once, one more back every Refill.
type Rate struct {
	Burst  int
	Refill time.Duration
}

// Options configure a Limiter. Zero values take the defaults documented per field.
type Options struct {
	// PerAddress is each client address's budget. Default 20 failures, one more
	// every 3 s.
	PerAddress Rate
	// PerAccount is each account's budget, over every address. Default 100
	// failures, one more every second.
	PerAccount Rate
	// KnownFor is how long an address that authenticated for an account stays
	// exempt from that account's budget. Default 24 h.
	KnownFor time.Duration
	// MaxKeys bounds each table (addresses, accounts, known addresses): past it,
	// entries with nothing to remember go first, then everything. Default 100,000.
	MaxKeys int
	// Clock tells the time of refills. Default the wall clock.
	Clock retry.Clock
}

// WithDefaults returns o with every zero value replaced by its default.
func (o Options) WithDefaults() Options {
	if o.PerAddress == (Rate{}) {
		o.PerAddress = Rate{Burst: 20, Refill: 3 * time.Second}
	}
	if o.PerAccount == (Rate{}) {
		o.PerAccount = Rate{Burst: 100, Refill: time.Second}
	}
	if o.KnownFor == 0 {
		o.KnownFor = 24 * time.Hour
	}
	if o.MaxKeys == 0 {
		o.MaxKeys = 100_000
	}
	if o.Clock == nil {
		o.Clock = retry.SystemClock{}
	}
	return o
}

// Limiter counts failed authentications. It is safe for concurrent use.
type Limiter struct {
	opts Options

	mu        sync.Mutex
	addresses map[netip.Prefix]*bucket
	accounts  map[string]*bucket
	known     map[knownKey]time.Time // until when the address is known to the account
}

type knownKey struct {
	account string
	addr    netip.Prefix
}

// bucket is a budget of failures: tokens left at the time it was last changed.
type bucket struct {
	tokens float64
	at     time.Time
}

// New returns a Limiter of o.
func New(o Options) *Limiter {
	o = o.WithDefaults()
	return &Limiter{opts: o, addresses: map[netip.Prefix]*bucket{}, accounts: map[string]*bucket{}, known: map[knownKey]time.Time{}}
}

// clientKey holds a request's client address.
type clientKey struct{}

// WithClient returns ctx carrying the client's address.
func WithClient(ctx context.Context, addr netip.Addr) context.Context {
	return context.WithValue(ctx, clientKey{}, addr)
}

// ClientOf returns the client address in ctx; the invalid address when none, which
// the limiter counts as one client.
func ClientOf(ctx context.Context) netip.Addr {
	a, _ := ctx.Value(clientKey{}).(netip.Addr)
	return a
}

// ClientAddr returns the address of the client of r: the connection's peer, or,
// when that peer is one of trusted (a proxy), the last address of X-Forwarded-For
// that is not itself trusted.
func ClientAddr(r *http.Request, trusted []netip.Prefix) netip.Addr {
	peer, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return netip.Addr{}
	}
	addr := peer.Addr().Unmap()
	if !within(addr, trusted) {
		return addr
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		hop, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			return addr // a hop we cannot read: the proxy is the client we know
		}
		if hop = hop.Unmap(); !within(hop, trusted) {
			return hop
		}
		addr = hop
	}
	return addr
}

func within(a netip.Addr, prefixes []netip.Prefix) bool {
	for _, p := range prefixes {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// keyOf groups addresses: an IPv6 client commonly holds a whole /64.
func keyOf(a netip.Addr) netip.Prefix {
	if !a.IsValid() {
		return netip.Prefix{}
	}
	bits := 32
	if a.Is6() {
		bits = 64
	}
	p, _ := a.Prefix(bits)
	return p
}

// Check reports whether an authentication from the client of ctx, naming account
// (empty when the request names none), may be tried now; when not, how long until
// it may. It counts nothing.
func (l *Limiter) Check(ctx context.Context, account string) (retryAfter time.Duration, ok bool) {
	addr := keyOf(ClientOf(ctx))
	now := l.opts.Clock.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if wait := wait(l.addresses[addr], l.opts.PerAddress, now); wait > 0 {
		return wait, false
	}
	if account == "" {
		return 0, true
	}
	if until, ok := l.known[knownKey{account, addr}]; ok && now.Before(until) {
		return 0, true
	}
	if wait := wait(l.accounts[account], l.opts.PerAccount, now); wait > 0 {
		return wait, false
	}
	return 0, true
}

// Failed counts a failed authentication of the client of ctx, naming account (or
// none).
func (l *Limiter) Failed(ctx context.Context, account string) {
	addr := keyOf(ClientOf(ctx))
	now := l.opts.Clock.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	take(l, l.addresses, addr, l.opts.PerAddress, now)
	if account != "" {
		take(l, l.accounts, account, l.opts.PerAccount, now)
	}
}

// Succeeded records that the client of ctx authenticated for account: it stays
// exempt from the account's budget for KnownFor. It counts no failure back.
func (l *Limiter) Succeeded(ctx context.Context, account string) {
	addr := keyOf(ClientOf(ctx))
	now := l.opts.Clock.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	k := knownKey{account, addr}
	if _, ok := l.known[k]; !ok && len(l.known) >= l.opts.MaxKeys {
		for key, until := range l.known {
			if !now.Before(until) {
				delete(l.known, key)
			}
		}
		if len(l.known) >= l.opts.MaxKeys {
			clear(l.known)
		}
	}
	l.known[k] = now.Add(l.opts.KnownFor)
}

// level is the tokens b holds at now under r.
func level(b *bucket, r Rate, now time.Time) float64 {
	if b == nil {
		return float64(r.Burst)
	}
	return math.Min(float64(r.Burst), b.tokens+float64(now.Sub(b.at))/float64(r.Refill))
}

// wait is how long until b holds a token, 0 when it does.
func wait(b *bucket, r Rate, now time.Time) time.Duration {
	tokens := level(b, r, now)
	if tokens >= 1 {
		return 0
	}
	return time.Duration((1 - tokens) * float64(r.Refill))
}

// take spends a token of the bucket of key, making room in the table if needed.
func take[K comparable](l *Limiter, table map[K]*bucket, key K, r Rate, now time.Time) {
	b := table[key]
	if b == nil {
		if len(table) >= l.opts.MaxKeys {
			for k, old := range table {
				if level(old, r, now) >= float64(r.Burst) {
					delete(table, k)
				}
			}
			if len(table) >= l.opts.MaxKeys {
				clear(table)
			}
		}
		b = &bucket{tokens: float64(r.Burst), at: now}
		table[key] = b
	}
	b.tokens, b.at = math.Max(level(b, r, now)-1, 0), now
}
