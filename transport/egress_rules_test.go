package transport_test

import (
	"errors"
	"net/netip"
	"net/url"
	"testing"

	"github.com/switchboard-voice/switchboard/transport"
)

// TestCheckIPRanges has one row per range of docs/outbox.md §6 (plus the ranges call
// control treats specially), with the verdict of each built-in rule set.
func TestCheckIPRanges(t *testing.T) {
	t.Parallel()
	const (
		allow  = true
		refuse = false
	)
	rows := []struct {
		ip                         string
		public, callctl, callctlLo bool // PublicOnly, CallControlRules(false), CallControlRules(true)
	}{
		{"93.184.216.34", allow, allow, allow},
		{"8.8.8.8", allow, allow, allow},
		{"2606:4700::1111", allow, allow, allow},
		{"0.0.0.0", refuse, refuse, refuse},
		{"0.1.2.3", refuse, refuse, refuse},
		{"10.0.0.1", refuse, allow, allow},
		{"10.255.255.255", refuse, allow, allow},
		{"100.64.0.1", refuse, refuse, refuse},
		{"100.127.255.254", refuse, refuse, refuse},
		{"127.0.0.1", refuse, refuse, allow},
		{"127.255.0.9", refuse, refuse, allow},
		{"169.254.169.254", refuse, refuse, refuse},
		{"169.254.1.1", refuse, refuse, refuse},
		{"172.16.0.1", refuse, allow, allow},
		{"172.31.255.255", refuse, allow, allow},
		{"172.32.0.1", allow, allow, allow},
		{"192.0.0.8", refuse, refuse, refuse},
		{"192.0.2.1", refuse, refuse, refuse},
		{"192.88.99.1", refuse, refuse, refuse},
		{"192.168.1.1", refuse, allow, allow},
		{"198.18.0.1", refuse, refuse, refuse},
		{"198.19.255.255", refuse, refuse, refuse},
		{"198.51.100.7", refuse, refuse, refuse},
		{"203.0.113.9", refuse, refuse, refuse},
		{"224.0.0.1", refuse, refuse, refuse},
		{"239.255.255.250", refuse, refuse, refuse},
		{"240.0.0.1", refuse, refuse, refuse},
		{"255.255.255.255", refuse, refuse, refuse},
		{"::", refuse, refuse, refuse},
		{"::1", refuse, refuse, allow},
		{"::ffff:127.0.0.1", refuse, refuse, allow},
		{"::ffff:10.0.0.1", refuse, allow, allow},
		{"::ffff:169.254.169.254", refuse, refuse, refuse},
		{"::ffff:8.8.8.8", allow, allow, allow},
		{"fe80::1", refuse, refuse, refuse},
		{"fe80::1%eth0", refuse, refuse, refuse},
		{"fc00::1", refuse, allow, allow},
		{"fd12:3456::1", refuse, allow, allow},
		{"fd00:ec2::254", refuse, refuse, refuse},
		{"ff02::1", refuse, refuse, refuse},
		{"64:ff9b::a00:1", refuse, refuse, refuse},
		{"64:ff9b::808:808", refuse, refuse, refuse},
		{"64:ff9b:1::1", refuse, refuse, refuse},
		{"2001::1", refuse, refuse, refuse},
		{"2001:1ff::1", refuse, refuse, refuse},
		{"2001:200::1", allow, allow, allow},
		{"2001:db8::1", refuse, refuse, refuse},
		{"2002:c0a8:101::", refuse, refuse, refuse},
		{"2002:808:808::1", refuse, refuse, refuse},
		{"3fff::1", refuse, refuse, refuse},
		{"3fff:fff::1", refuse, refuse, refuse},
		{"3fff:1000::1", allow, allow, allow},
		{"4000::1", refuse, refuse, refuse},
		{"100::1", refuse, refuse, refuse},
	}
	sets := []struct {
		name  string
		rules transport.EgressRules
	}{
		{"PublicOnly", transport.PublicOnly()},
		{"CallControl", transport.CallControlRules(false)},
		{"CallControl+loopback", transport.CallControlRules(true)},
	}
	for _, r := range rows {
		want := []bool{r.public, r.callctl, r.callctlLo}
		ip := netip.MustParseAddr(r.ip)
		for i, s := range sets {
			err := s.rules.CheckIP(ip)
			if (err == nil) != want[i] {
				t.Errorf("%s.CheckIP(%s) = %v, want allowed=%v", s.name, r.ip, err, want[i])
			}
			if err != nil {
				var re *transport.RefusedError
				if !errors.Is(err, transport.ErrEgressRefused) || !errors.As(err, &re) || re.Reason == "" || !re.IP.IsValid() {
					t.Errorf("%s.CheckIP(%s) error %#v does not carry IP and reason", s.name, r.ip, err)
				}
			}
		}
	}
}

func TestCheckIPKnobsAndAllowList(t *testing.T) {
	t.Parallel()
	r := transport.PublicOnly()
	r.AllowPrefixes = []netip.Prefix{netip.MustParsePrefix("10.1.0.0/16"), netip.MustParsePrefix("fd00:ec2::254/128"),
		netip.MustParsePrefix("::ffff:127.0.0.0/104")} // written mapped: it means 127.0.0.0/8
	for ip, want := range map[string]bool{"10.1.2.3": true, "10.2.0.1": false, "::ffff:10.1.0.1": true, "fd00:ec2::254": true,
		"127.0.0.1": true, "::ffff:127.0.0.1": true, "::1": false} {
		if err := r.CheckIP(netip.MustParseAddr(ip)); (err == nil) != want {
			t.Errorf("allow-list CheckIP(%s) = %v, want allowed=%v", ip, err, want)
		}
	}
	ll := transport.CallControlRules(false)
	ll.AllowLinkLocal = true
	if err := ll.CheckIP(netip.MustParseAddr("169.254.169.254")); err != nil {
		t.Errorf("AllowLinkLocal: %v", err)
	}
	if err := (transport.EgressRules{}).CheckIP(netip.Addr{}); !errors.Is(err, transport.ErrEgressRefused) {
		t.Errorf("invalid address: %v", err)
	}
}

func TestCheckURL(t *testing.T) {
	t.Parallel()
	pub := transport.PublicOnly()
	cc := transport.CallControlRules(false)
	allowHost := transport.PublicOnly()
	allowHost.AllowHosts = []string{"Internal.Example."}
	rows := []struct {
		name  string
		rules transport.EgressRules
		url   string
		ok    bool
	}{
		{"public name", pub, "https://hooks.example.com/x", true},
		{"public literal", pub, "http://93.184.216.34:8080/x", true},
		{"ws refused by PublicOnly", pub, "wss://hooks.example.com/x", false},
		{"wss allowed for call control", cc, "wss://hooks.example.com/x", true},
		{"ftp refused", cc, "ftp://hooks.example.com/x", false},
		{"scheme case-insensitive", cc, "HTTPS://hooks.example.com/", true},
		{"loopback literal", pub, "http://127.0.0.1/", false},
		{"private literal", pub, "http://10.0.0.1/", false},
		{"private literal ok for call control", cc, "http://192.168.1.10/", true},
		{"zero address", pub, "http://0.0.0.0:80/", false},
		{"unspecified v6", pub, "http://[::]/", false},
		{"mapped loopback", pub, "http://[::ffff:127.0.0.1]/", false},
		{"mapped loopback hex form", pub, "http://[::ffff:7f00:1]/", false},
		{"link-local with zone", cc, "http://[fe80::1%25eth0]/", false},
		{"NAT64 of 10.0.0.1", pub, "http://[64:ff9b::a00:1]/", false},
		{"NAT64 of 10.0.0.1 under call control", cc, "http://[64:ff9b::a00:1]/", false},
		{"6to4 of 192.168.1.1", pub, "http://[2002:c0a8:0101::]/", false},
		{"metadata", cc, "http://169.254.169.254/latest/meta-data/", false},
		{"user-info trick", pub, "http://public.example@127.0.0.1/", false},
		{"user-info on a public host", pub, "http://user:pw@hooks.example.com/", false},
		{"decimal IPv4", pub, "http://2130706433/", false},
		{"short IPv4", pub, "http://127.1/", false},
		{"hex IPv4", pub, "http://0x7f.0.0.1/", false},
		{"octal IPv4", pub, "http://0177.0.0.1/", false},
		{"numeric-looking name with letters is a name", pub, "http://1.2.3.example/", true},
		{"allow-listed host", allowHost, "http://internal.example/", true},
		{"no host", pub, "http:///path", false},
	}
	for _, r := range rows {
		u, err := url.Parse(r.url)
		if err != nil {
			t.Fatalf("%s: url.Parse: %v", r.name, err)
		}
		err = r.rules.CheckURL(u)
		if (err == nil) != r.ok {
			t.Errorf("%s: CheckURL(%s) = %v, want ok=%v", r.name, r.url, err, r.ok)
		}
		if err != nil && !errors.Is(err, transport.ErrEgressRefused) {
			t.Errorf("%s: error %v does not match ErrEgressRefused", r.name, err)
		}
	}
	if err := pub.CheckURL(nil); !errors.Is(err, transport.ErrEgressRefused) {
		t.Errorf("nil URL: %v", err)
	}
}
