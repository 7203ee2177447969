package transport_test

import (
	"errors"
	"net"
	"net/netip"
	"net/url"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/internal/testkit"
	"github.com/switchboard-voice/switchboard/transport"
)

func FuzzCheckURL(f *testing.F) {
	testkit.AddSeeds[string](f,
		"https://hooks.example.com/x", "http://127.0.0.1/", "http://[::ffff:127.0.0.1]/",
		"http://[fe80::1%25eth0]/", "http://public.example@127.0.0.1/", "http://2130706433/",
		"http://0x7f.1/", "ws://10.0.0.1/", "http://[64:ff9b::a00:1]:80/", "HTTP://0177.0.0.1.",
		"http://%31%32%37.0.0.1/", "http:///x", "gopher://x",
	)
	pub := transport.PublicOnly()
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := url.Parse(raw)
		if err != nil {
			return
		}
		err = pub.CheckURL(u)
		if err != nil {
			var re *transport.RefusedError
			if !errors.Is(err, transport.ErrEgressRefused) || !errors.As(err, &re) || re.Reason == "" {
				t.Fatalf("CheckURL(%q) = %v: not a refusal with a reason", raw, err)
			}
			return
		}
		if u.User != nil {
			t.Fatalf("CheckURL(%q) allowed user-info", raw)
		}
		if ip, perr := netip.ParseAddr(u.Hostname()); perr == nil {
			if err := pub.CheckIP(ip); err != nil {
				t.Fatalf("CheckURL(%q) allowed an IP that CheckIP refuses: %v", raw, err)
			}
		}
	})
}

func FuzzCheckIP(f *testing.F) {
	for _, s := range []string{"127.0.0.1", "::ffff:10.0.0.1", "64:ff9b::a00:1", "2002:c0a8:101::", "8.8.8.8", "2606:4700::1"} {
		f.Add(netip.MustParseAddr(s).AsSlice())
	}
	pub, cc := transport.PublicOnly(), transport.CallControlRules(false)
	f.Fuzz(func(t *testing.T, b []byte) {
		ip, ok := netip.AddrFromSlice(b)
		if !ok {
			return
		}
		pubErr, ccErr := pub.CheckIP(ip), cc.CheckIP(ip)
		if pubErr == nil && ccErr != nil {
			t.Fatalf("%s: public-only allows what call control refuses (%v)", ip, ccErr)
		}
		// An address and its IPv4-mapped form get the same verdict.
		var other netip.Addr
		switch {
		case ip.Is4():
			other = netip.AddrFrom16(ip.As16())
		case ip.Is4In6():
			other = ip.Unmap()
		default:
			return
		}
		if (pub.CheckIP(other) == nil) != (pubErr == nil) || (cc.CheckIP(other) == nil) != (ccErr == nil) {
			t.Fatalf("%s and %s get different verdicts", ip, other)
		}
	})
}

func FuzzDialControl(f *testing.F) {
	testkit.AddSeeds[string](f, "127.0.0.1:80", "[::ffff:127.0.0.1]:443", "[fe80::1%eth0]:80", "8.8.8.8:53", "x:1", ":80", "[::1]", "1.2.3.4")
	d := transport.NewDialer(transport.PublicOnly(), time.Second)
	f.Fuzz(func(t *testing.T, address string) {
		err := d.Control("tcp", address, nil)
		if err != nil {
			if !errors.Is(err, transport.ErrEgressRefused) {
				t.Fatalf("Control(%q) = %v: not a refusal", address, err)
			}
			return
		}
		host, _, serr := net.SplitHostPort(address)
		ip, perr := netip.ParseAddr(host)
		if serr != nil || perr != nil || transport.PublicOnly().CheckIP(ip) != nil {
			t.Fatalf("Control(%q) allowed an address that is not an allowed IP", address)
		}
	})
}
