package transport_test

import (
	"context"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/fragment"
	"github.com/switchboard-voice/switchboard/internal/testkit"
	"github.com/switchboard-voice/switchboard/transport"
)

// loopbackRules are the call-control rules with loopback allowed, so the test
// servers on 127.0.0.1 are reachable.
func loopbackRules() transport.EgressRules { return transport.CallControlRules(true) }

// newHookClient builds a HookClient reaching loopback, with a recording sleeper,
// and closes its idle connections at cleanup.
func newHookClient(t *testing.T, opts transport.HookClientOptions) (*transport.HookClient, *testkit.SleepRecorder) {
	t.Helper()
	rec := &testkit.SleepRecorder{}
	if len(opts.Rules.Schemes) == 0 {
		opts.Rules = loopbackRules()
	}
	if opts.Sleep == nil {
		opts.Sleep = rec.Sleep
	}
	if opts.Timeout == 0 {
		opts.Timeout = 5 * time.Second
	}
	c := transport.NewHookClient(opts)
	t.Cleanup(c.CloseIdleConnections)
	return c, rec
}

func mustTarget(t testing.TB, raw string) fragment.Target {
	t.Helper()
	tg, err := fragment.Parse(raw)
	if err != nil {
		t.Fatalf("fragment.Parse(%q): %v", raw, err)
	}
	return tg
}

// staticResolver answers from a fixed table; names not in it are NXDOMAIN.
func staticResolver(table map[string][]string) transport.Resolver {
	return transport.ResolverFunc(func(_ context.Context, _, host string) ([]netip.Addr, error) {
		// Like DNS: case-insensitive, trailing dot optional.
		addrs, ok := table[strings.TrimSuffix(strings.ToLower(host), ".")]
		if !ok {
			return nil, notFound(host)
		}
		out := make([]netip.Addr, len(addrs))
		for i, a := range addrs {
			out[i] = netip.MustParseAddr(a)
		}
		return out, nil
	})
}

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }
