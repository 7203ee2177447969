package authlimit

import (
	"context"
	"net/http"
	"net/netip"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/switchboard-voice/switchboard/internal/testkit"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func from(addr string) context.Context {
	return WithClient(context.Background(), netip.MustParseAddr(addr))
}

// An address's failures use its budget: past it every attempt is refused, saying
// when one will be allowed, until the budget refills; another address is not
// affected, and successes spend nothing.
func TestAddressBudget(t *testing.T) {
	t.Parallel()
	clock := testkit.NewClock()
	l := New(Options{PerAddress: Rate{Burst: 3, Refill: 10 * time.Second}, Clock: clock})
	a, b := from("192.0.2.1"), from("192.0.2.2")
	for range 5 {
		l.Succeeded(a, "acct")
	}
	for i := range 3 {
		if _, ok := l.Check(a, ""); !ok {
			t.Fatalf("attempt %d refused within the budget", i)
		}
		l.Failed(a, "")
	}
	if wait, ok := l.Check(a, ""); ok || wait != 10*time.Second {
		t.Fatalf("after the budget: %v %v, want refused for 10 s", wait, ok)
	}
	if _, ok := l.Check(b, ""); !ok {
		t.Fatal("another address was refused")
	}
	clock.Advance(4 * time.Second)
	if wait, ok := l.Check(a, ""); ok || wait != 6*time.Second {
		t.Fatalf("4 s later: %v %v, want refused for 6 s more", wait, ok)
	}
	clock.Advance(6 * time.Second)
	if _, ok := l.Check(a, ""); !ok {
		t.Fatal("refused once a failure refilled")
	}
	l.Failed(a, "")
	if _, ok := l.Check(a, ""); ok {
		t.Fatal("one refill allowed two failures")
	}
}

// IPv6 clients count by their /64.
func TestIPv6CountsByPrefix(t *testing.T) {
	t.Parallel()
	l := New(Options{PerAddress: Rate{Burst: 1, Refill: time.Hour}, Clock: testkit.NewClock()})
	l.Failed(from("2001:db8:1:2::1"), "")
	if _, ok := l.Check(from("2001:db8:1:2::ffff"), ""); ok {
		t.Error("another address of the same /64 was allowed")
	}
	if _, ok := l.Check(from("2001:db8:1:3::1"), ""); !ok {
		t.Error("another /64 was refused")
	}
}

// Failures spread over many addresses spend the account's budget: then addresses
// that never authenticated for it are refused, while one that did is not.
func TestAccountBudgetSparesKnownAddresses(t *testing.T) {
	t.Parallel()
	l := New(Options{PerAddress: Rate{Burst: 100, Refill: time.Hour}, PerAccount: Rate{Burst: 5, Refill: time.Hour}, Clock: testkit.NewClock()})
	known := from("198.51.100.7")
	l.Succeeded(known, "acct")
	for i := range 5 {
		l.Failed(from(netip.AddrFrom4([4]byte{203, 0, 113, byte(i)}).String()), "acct")
	}
	if _, ok := l.Check(from("203.0.113.200"), "acct"); ok {
		t.Error("a new address was allowed on an account past its budget")
	}
	if _, ok := l.Check(known, "acct"); !ok {
		t.Error("an address that authenticated for the account was refused")
	}
	if _, ok := l.Check(from("203.0.113.200"), "other"); !ok {
		t.Error("another account was refused")
	}
}

// The tables stay bounded: past MaxKeys they forget what they need not remember.
func TestTablesStayBounded(t *testing.T) {
	t.Parallel()
	l := New(Options{MaxKeys: 10, Clock: testkit.NewClock()})
	for i := range 1000 {
		ctx := from(netip.AddrFrom4([4]byte{10, 0, byte(i >> 8), byte(i)}).String())
		l.Failed(ctx, "acct")
		l.Succeeded(ctx, "acct")
	}
	if len(l.addresses) > 10 || len(l.known) > 10 || len(l.accounts) > 10 {
		t.Fatalf("tables grew to %d, %d, %d", len(l.addresses), len(l.known), len(l.accounts))
	}
}

// The client is the connection's peer, or behind trusted proxies the last address
// of X-Forwarded-For that is not one of them; a forged header from an untrusted
// peer changes nothing.
func TestClientAddr(t *testing.T) {
	t.Parallel()
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
	cases := []struct {
		peer, xff, want string
	}{
		{"203.0.113.5:1234", "198.51.100.1", "203.0.113.5"},
		{"10.1.1.1:1234", "198.51.100.1", "198.51.100.1"},
		{"10.1.1.1:1234", "192.0.2.9, 198.51.100.1, 10.2.2.2", "198.51.100.1"},
		{"10.1.1.1:1234", "", "10.1.1.1"},
		{"10.1.1.1:1234", "garbage", "10.1.1.1"},
		{"[::ffff:203.0.113.5]:1", "", "203.0.113.5"},
	}
	for _, c := range cases {
		r, _ := http.NewRequest("GET", "/", nil)
		r.RemoteAddr = c.peer
		if c.xff != "" {
			r.Header.Set("X-Forwarded-For", c.xff)
		}
		if got := ClientAddr(r, trusted); got != netip.MustParseAddr(c.want) {
			t.Errorf("peer %s, X-Forwarded-For %q: %s, want %s", c.peer, c.xff, got, c.want)
		}
	}
}
