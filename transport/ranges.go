package transport

import "net/netip"

// addrKind is the family of address ranges an IP belongs to, which decides which
// EgressRules knob lets it through.
type addrKind int

const (
	kindPublic    addrKind = iota
	kindLoopback           // 127/8, ::1
	kindPrivate            // RFC 1918, IPv6 unique-local fc00::/7
	kindLinkLocal          // 169.254/16, fe80::/10, cloud metadata addresses
	kindSpecial            // every other non-public range (docs/outbox.md §6)
)

type namedRange struct {
	prefix netip.Prefix
	kind   addrKind
	reason string
}

func r(cidr string, kind addrKind, reason string) namedRange {
	return namedRange{netip.MustParsePrefix(cidr), kind, reason}
}

// metadataAddrs are cloud instance-metadata endpoints. 169.254.169.254 is link-local
// anyway; fd00:ec2::254 sits in unique-local space, which call control allows as
// private, so it is listed on its own to keep it refused with link-local.
var metadataAddrs = []namedRange{
	r("169.254.169.254/32", kindLinkLocal, "cloud metadata address"),
	r("fd00:ec2::254/128", kindLinkLocal, "cloud metadata address"),
}

// refusedV4 lists the IPv4 ranges of docs/outbox.md §6. Order matters only for the
// reason reported: more specific ranges come first.
var refusedV4 = []namedRange{
	r("255.255.255.255/32", kindSpecial, "limited broadcast"),
	r("0.0.0.0/8", kindSpecial, "\"this network\" (0.0.0.0/8)"),
	r("10.0.0.0/8", kindPrivate, "private (RFC 1918)"),
	r("100.64.0.0/10", kindSpecial, "shared address space (100.64/10)"),
	r("127.0.0.0/8", kindLoopback, "loopback"),
	r("169.254.0.0/16", kindLinkLocal, "link-local"),
	r("172.16.0.0/12", kindPrivate, "private (RFC 1918)"),
	r("192.0.0.0/24", kindSpecial, "IETF protocol assignments (192.0.0/24)"),
	r("192.0.2.0/24", kindSpecial, "documentation (TEST-NET-1)"),
	r("192.88.99.0/24", kindSpecial, "6to4 relay anycast"),
	r("192.168.0.0/16", kindPrivate, "private (RFC 1918)"),
	r("198.18.0.0/15", kindSpecial, "benchmarking (198.18/15)"),
	r("198.51.100.0/24", kindSpecial, "documentation (TEST-NET-2)"),
	r("203.0.113.0/24", kindSpecial, "documentation (TEST-NET-3)"),
	r("224.0.0.0/4", kindSpecial, "multicast"),
	r("240.0.0.0/4", kindSpecial, "reserved (240/4)"),
}

// globalUnicastV6 is the only IPv6 space that can be public; refusedInsideV6 are the
// special ranges inside it.
var globalUnicastV6 = netip.MustParsePrefix("2000::/3")

var refusedInsideV6 = []namedRange{
	r("2001:db8::/32", kindSpecial, "documentation (2001:db8::/32)"),
	r("2001::/23", kindSpecial, "IETF protocol assignments (2001::/23, Teredo)"),
	r("2002::/16", kindSpecial, "6to4 (2002::/16)"),
	r("3fff::/20", kindSpecial, "documentation (3fff::/20)"),
}

// refusedOutsideV6 names the well-known ranges outside 2000::/3 so a refusal says
// what the address is; anything else outside 2000::/3 is refused as "not global".
var refusedOutsideV6 = []namedRange{
	r("::1/128", kindLoopback, "loopback"),
	r("::/128", kindSpecial, "unspecified address"),
	r("64:ff9b::/96", kindSpecial, "NAT64 (64:ff9b::/96)"),
	r("64:ff9b:1::/48", kindSpecial, "local-use NAT64 (64:ff9b:1::/48)"),
	r("fe80::/10", kindLinkLocal, "link-local"),
	r("fc00::/7", kindPrivate, "unique local (fc00::/7)"),
	r("ff00::/8", kindSpecial, "multicast"),
}

// classifyAddr says which family of ranges ip belongs to and why. ip must be valid,
// unmapped and without zone.
func classifyAddr(ip netip.Addr) (addrKind, string) {
	for _, m := range metadataAddrs {
		if m.prefix.Contains(ip) {
			return m.kind, m.reason
		}
	}
	if ip.Is4() {
		for _, n := range refusedV4 {
			if n.prefix.Contains(ip) {
				return n.kind, n.reason
			}
		}
		return kindPublic, ""
	}
	if globalUnicastV6.Contains(ip) {
		for _, n := range refusedInsideV6 {
			if n.prefix.Contains(ip) {
				return n.kind, n.reason
			}
		}
		return kindPublic, ""
	}
	for _, n := range refusedOutsideV6 {
		if n.prefix.Contains(ip) {
			return n.kind, n.reason
		}
	}
	return kindSpecial, "outside global unicast (2000::/3)"
}
