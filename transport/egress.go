package transport

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"slices"
	"strings"
)

// ErrEgressRefused is matched (errors.Is) by every refusal of the egress rules, also
// through the *url.Error and *net.OpError that wrap it. A refusal is never a network
// fault: it is never retried as one.
var ErrEgressRefused = errors.New("egress refused")

// RefusedError is the error returned when the egress rules refuse a destination.
// It matches ErrEgressRefused.
type RefusedError struct {
	// Host is the host name or literal of the URL, when known.
	Host string
	// IP is the refused address; invalid when the refusal happened before an
	// address was known (scheme, user-info, ambiguous host).
	IP netip.Addr
	// Reason says why, e.g. "loopback" or "scheme \"ftp\" not allowed".
	Reason string
	// Rules names the rules that refused it (EgressRules.Name), when they have a
	// name.
	Rules string
	// Setting names what can let the refused address through (EgressRules.AllowSetting),
	// for a refusal of an address's range only.
	Setting string
}

func (e *RefusedError) Error() string {
	var msg string
	switch {
	case e.IP.IsValid() && e.Host != "" && e.Host != e.IP.String():
		msg = fmt.Sprintf("egress refused: %s (%s): %s", e.Host, e.IP, e.Reason)
	case e.IP.IsValid():
		msg = fmt.Sprintf("egress refused: %s: %s", e.IP, e.Reason)
	case e.Host != "":
		msg = fmt.Sprintf("egress refused: %s: %s", e.Host, e.Reason)
	default:
		msg = "egress refused: " + e.Reason
	}
	if e.Rules != "" {
		msg += " (the " + e.Rules + ")"
	}
	if e.Setting != "" {
		msg += "; " + e.Setting + " can allow it"
	}
	return msg
}

// Is makes a *RefusedError match ErrEgressRefused.
func (e *RefusedError) Is(target error) bool { return target == ErrEgressRefused }

// EgressRules says which destinations outbound connections may reach. The zero value
// refuses every non-public address and every scheme; use PublicOnly or
// CallControlRules as a starting point and adjust.
type EgressRules struct {
	// Schemes are the URL schemes allowed, lower case (e.g. "https").
	Schemes []string
	// AllowLoopback lets 127/8 and ::1 through.
	AllowLoopback bool
	// AllowPrivate lets RFC 1918 ranges and IPv6 unique-local (fc00::/7) through.
	AllowPrivate bool
	// AllowLinkLocal lets 169.254/16, fe80::/10 and cloud metadata addresses through.
	AllowLinkLocal bool
	// AllowPrefixes are always allowed, whatever range they are in.
	AllowPrefixes []netip.Prefix
	// AllowHosts are host names (case-insensitive, exact) whose addresses are allowed
	// whatever they resolve to. The IP check still applies to literal addresses.
	AllowHosts []string
	// DenyHosts are host names refused whatever they resolve to, before any lookup
	// (lucibook's "blocked hostnames"): an entry "name.example" refuses that name, and
	// an entry starting with a dot (".example.com", or "*.example.com") every name
	// under it. Matching is case-insensitive and ignores a trailing dot. A denied name
	// is refused even when AllowHosts lists it.
	DenyHosts []string
	// Name names the rules in their refusals (RefusedError.Rules), e.g. "public-only
	// rules of webhook endpoints". Default none.
	Name string
	// AllowSetting names the operator's setting that lets refused ranges through
	// (AllowPrefixes, AllowHosts), in the refusals of an address's range
	// (RefusedError.Setting), e.g. "SWITCHBOARD_OUTBOX_EGRESS_ALLOW". Default none.
	AllowSetting string
	// AllowUserInfo lets URLs carry user:password@ (refused by default: credentials
	// belong in the request options, and user-info is a classic way to disguise the
	// real host, as in http://public.example@127.0.0.1/).
	AllowUserInfo bool
}

// PublicOnly refuses every range of docs/outbox.md §6 and allows http and https: the
// outbox default, narrowed further per profile.
func PublicOnly() EgressRules {
	return EgressRules{Schemes: []string{"http", "https"}}
}

// CallControlRules are the call-control rules of docs/call-control.md §5: private (RFC
// 1918) addresses allowed, loopback only when allowLoopback is true, link-local,
// metadata and the other special ranges refused; schemes http, https, ws and wss.
func CallControlRules(allowLoopback bool) EgressRules {
	return EgressRules{
		Schemes:       []string{"http", "https", "ws", "wss"},
		AllowPrivate:  true,
		AllowLoopback: allowLoopback,
	}
}

// unmapPrefix makes an allow-list entry written in IPv4-mapped form
// (::ffff:127.0.0.0/104) the IPv4 prefix it stands for: addresses are unmapped
// before they are checked, so the mapped form would match none.
func unmapPrefix(p netip.Prefix) netip.Prefix {
	if a := p.Addr(); a.Is4In6() && p.Bits() >= 96 {
		return netip.PrefixFrom(a.Unmap(), p.Bits()-96)
	}
	return p
}

// CheckIP returns nil when the rules allow connecting to ip, or a *RefusedError.
// IPv4-mapped IPv6 addresses are checked as the IPv4 address they carry, and zones
// are ignored.
func (r EgressRules) CheckIP(ip netip.Addr) error {
	if !ip.IsValid() {
		return &RefusedError{Reason: "invalid address", Rules: r.Name}
	}
	ip = ip.Unmap().WithZone("")
	for _, p := range r.AllowPrefixes {
		if unmapPrefix(p).Contains(ip) {
			return nil
		}
	}
	kind, reason := classifyAddr(ip)
	allowed := false
	switch kind {
	case kindPublic:
		allowed = true
	case kindLoopback:
		allowed = r.AllowLoopback
	case kindPrivate:
		allowed = r.AllowPrivate
	case kindLinkLocal:
		allowed = r.AllowLinkLocal
	}
	if allowed {
		return nil
	}
	return &RefusedError{IP: ip, Reason: reason, Rules: r.Name, Setting: r.AllowSetting}
}

// Admits reports whether these rules would have connected to ip for a URL whose
// host is host (a name or an IP literal): the name is not denied, and either the
// rules trust the name (AllowHosts) or they allow ip. The scheme is not looked at.
func (r EgressRules) Admits(host string, ip netip.Addr) bool {
	if _, denied := r.hostDenied(host); denied {
		return false
	}
	if _, err := netip.ParseAddr(host); err != nil && r.hostAllowed(host) {
		return true
	}
	return r.CheckIP(ip) == nil
}

// CheckURL checks what can be checked before dialing: the scheme, user-info, and the
// host when it is an IP literal (host names are checked on the address actually
// dialed). It returns nil or a *RefusedError.
func (r EgressRules) CheckURL(u *url.URL) error {
	if u == nil {
		return &RefusedError{Reason: "no URL", Rules: r.Name}
	}
	scheme := strings.ToLower(u.Scheme)
	if !slices.Contains(r.Schemes, scheme) {
		return &RefusedError{Host: u.Host, Reason: fmt.Sprintf("scheme %q not allowed", u.Scheme), Rules: r.Name}
	}
	if u.User != nil && !r.AllowUserInfo {
		return &RefusedError{Host: u.Hostname(), Reason: "URL carries user-info", Rules: r.Name}
	}
	return r.checkHost(u.Hostname())
}

// checkHost checks a host name or literal taken from a URL or a dial address.
func (r EgressRules) checkHost(host string) error {
	if host == "" {
		return &RefusedError{Reason: "no host", Rules: r.Name}
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		if err := r.CheckIP(ip); err != nil {
			var re *RefusedError
			if errors.As(err, &re) {
				re.Host = host
			}
			return err
		}
		return nil
	}
	if entry, denied := r.hostDenied(host); denied {
		return &RefusedError{Host: host, Reason: fmt.Sprintf("host name denied by the egress rules (%q)", entry), Rules: r.Name}
	}
	if r.hostAllowed(host) {
		return nil
	}
	if looksNumeric(host) {
		// "127.1", "0x7f000001", "2130706433": not IP literals to Go, but some
		// resolvers (getaddrinfo) read them as IPv4. Refuse rather than guess.
		return &RefusedError{Host: host, Reason: "ambiguous numeric host", Rules: r.Name}
	}
	return nil
}

func (r EgressRules) hostAllowed(host string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	for _, h := range r.AllowHosts {
		if strings.TrimSuffix(strings.ToLower(h), ".") == host {
			return true
		}
	}
	return false
}

// hostDenied reports whether a DenyHosts entry matches host, and which.
func (r EgressRules) hostDenied(host string) (string, bool) {
	host = canonicalHost(host)
	for _, entry := range r.DenyHosts {
		e := canonicalHost(strings.TrimPrefix(entry, "*"))
		switch {
		case e == "" || e == ".":
		case strings.HasPrefix(e, "."):
			if strings.HasSuffix(host, e) {
				return entry, true
			}
		case e == host:
			return entry, true
		}
	}
	return "", false
}

// looksNumeric reports whether every dot-separated label of host is a decimal,
// octal or hex number, the forms inet_aton accepts for IPv4.
func looksNumeric(host string) bool {
	host = strings.TrimSuffix(host, ".")
	if host == "" {
		return false
	}
	for _, label := range strings.Split(host, ".") {
		if !numericLabel(label) {
			return false
		}
	}
	return true
}

func numericLabel(s string) bool {
	if len(s) > 2 && (s[:2] == "0x" || s[:2] == "0X") {
		s = s[2:]
		for i := 0; i < len(s); i++ {
			c := s[i]
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
				return false
			}
		}
		return true
	}
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
