package outbox_test

import (
	"context"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/switchboard-voice/switchboard/internal/testkit"
	"github.com/switchboard-voice/switchboard/outbox"
	"github.com/switchboard-voice/switchboard/transport"
	"github.com/switchboard-voice/switchboard/transport/transporttest"
)

// movingResolver answers one address for every name until moved.
type movingResolver struct {
	mu   sync.Mutex
	addr netip.Addr
}

func (r *movingResolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return []netip.Addr{r.addr}, nil
}

func (r *movingResolver) move(a string) {
	r.mu.Lock()
	r.addr = netip.MustParseAddr(a)
	r.mu.Unlock()
}

// TestRebindingWithPooledConnection: an endpoint's host answered an attempt on a
// connection the pool keeps alive, then started to resolve to a refused address. The
// next attempt is refused by the egress rules, the kept-alive connection unused
// (docs/outbox.md §2 step 1): under sajn it fails as a network error and is retried;
// under lucibook the delivery is DEAD. Nothing reaches the refused address.
func TestRebindingWithPooledConnection(t *testing.T) {
	for _, c := range []struct {
		profile string
		want    outbox.DeliveryStatus
	}{{outbox.ProfileSajn, outbox.DeliveryPending}, {outbox.ProfileLucibook, outbox.DeliveryDead}} {
		t.Run(c.profile, func(t *testing.T) {
			ctx := context.Background()
			port := transporttest.SharedPort(t)
			refused := transporttest.NewSilentOn(t, "127.0.0.2:"+port)
			srv := transporttest.NewServerOn(t, "127.0.0.1:"+port)
			res := &movingResolver{addr: netip.MustParseAddr("127.0.0.1")}
			rules := transport.PublicOnly()
			rules.AllowPrefixes = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")} // stands for "public"
			ob, ep := openEgressed(t, rules, res, c.profile, "http://rebind.example:"+port+"/hook")
			// publish sends one event: its delivery with its one attempt.
			publish := func() (outbox.Delivery, outbox.Attempt) {
				d, as := sendOne(t, ob, "acct")
				if len(as) != 1 {
					t.Fatalf("delivery %+v %+v", d, as)
				}
				return d, as[0]
			}
			if d, _ := publish(); d.Status != outbox.DeliverySucceeded {
				t.Fatalf("first delivery %s", d.Status)
			}
			res.move("127.0.0.2")
			d, a := publish()
			if d.Status != c.want || a.Class != outbox.ClassEgressRefused || a.Status != 0 {
				t.Fatalf("after rebinding: %s, attempt %+v; want %s with an egress refusal", d.Status, a, c.want)
			}
			if n := len(srv.RequestsTo("/hook")); n != 1 {
				t.Fatalf("the old address got %d requests, want 1: the pooled connection was reused", n)
			}
			refused.AssertNothingArrived(t)
			if got, _ := ob.GetEndpoint(ctx, "acct", ep.ID); got.Status != outbox.EndpointActive {
				t.Fatalf("endpoint %s", got.Status)
			}
		})
	}
}

// TestDeniedHostname: an endpoint whose host is on the egress deny-list is refused as
// an egress refusal before any lookup, whatever it resolves to: lucibook's "blocked
// hostname" makes the delivery DEAD at once; sajn retries it as a network error.
func TestDeniedHostname(t *testing.T) {
	for _, c := range []struct {
		profile string
		want    outbox.DeliveryStatus
	}{{outbox.ProfileLucibook, outbox.DeliveryDead}, {outbox.ProfileSajn, outbox.DeliveryPending}} {
		t.Run(c.profile, func(t *testing.T) {
			srv := transporttest.NewServer(t)
			_, port, _ := strings.Cut(srv.Listener.Addr().String(), ":")
			var lookups atomic.Int32
			res := transport.ResolverFunc(func(context.Context, string, string) ([]netip.Addr, error) {
				lookups.Add(1)
				return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
			})
			rules := transport.PublicOnly()
			rules.AllowLoopback = true
			rules.DenyHosts = []string{".blocked.example"}
			ob, _ := openEgressed(t, rules, res, c.profile, "http://hooks.blocked.example:"+port+"/hook")
			d, as := sendOne(t, ob, "acct")
			if d.Status != c.want || len(as) != 1 || as[0].Class != outbox.ClassEgressRefused || !strings.Contains(as[0].Error, "denied") {
				t.Fatalf("delivery %s, attempts %+v; want %s with a deny-list refusal", d.Status, as, c.want)
			}
			if lookups.Load() != 0 || len(srv.Requests()) != 0 {
				t.Fatalf("%d lookups, %d requests: the denied host was reached", lookups.Load(), len(srv.Requests()))
			}
		})
	}
}

// openEgressed opens an outbox on a fresh store whose client resolves names with res
// and checks them by rules, with one endpoint of account acct at url under profile.
// The endpoint may use http whatever the profile says (lucibook is https only): the
// egress rules are what these tests are about.
func openEgressed(t *testing.T, rules transport.EgressRules, res transport.Resolver, profile, url string) (*outbox.Outbox, outbox.Endpoint) {
	t.Helper()
	client := transport.NewHTTPClient(rules, transport.ClientOptions{Resolver: res})
	t.Cleanup(client.CloseIdleConnections)
	ctx := context.Background()
	ob, err := outbox.Open(ctx, outbox.Config{Store: openStore(t), Clock: testkit.NewClock(), HTTPClient: client, Egress: &rules})
	if err != nil {
		t.Fatal(err)
	}
	allowHTTP := true
	ep, err := ob.CreateEndpoint(ctx, outbox.EndpointSpec{Account: "acct", URL: url, Profile: profile,
		Overrides: outbox.Overrides{AllowHTTP: &allowHTTP}})
	if err != nil {
		t.Fatal(err)
	}
	return ob, ep
}
