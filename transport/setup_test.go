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
	"github.com/switchboard-voice/switchboard/transport/transporttest"
)

// rebindingRules are the public-only rules with 127.0.0.1 standing for a public
// address: 127.0.0.2 stays refused.
func rebindingRules() transport.EgressRules {
	rules := transport.PublicOnly()
	rules.AllowPrefixes = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
	return rules
}

// rebindingTargets listens on one port at two addresses: a server at 127.0.0.1,
// which rebindingRules allow, and a silent listener at 127.0.0.2, which they refuse.
// The port is held for the test, so that neither listener finds it taken (a port
// picked at one address could be in use at the other).
func rebindingTargets(t *testing.T) (port string, allowed *transporttest.Server, refused *transporttest.Silent) {
	t.Helper()
	port = transporttest.SharedPort(t)
	refused = transporttest.NewSilentOn(t, "127.0.0.2:"+port)
	allowed = transporttest.NewServerOn(t, "127.0.0.1:"+port)
	return port, allowed, refused
}

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
