package fragment

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// ErrInvalidURL is wrapped by every error Parse and Resolve return.
var ErrInvalidURL = errors.New("invalid application URL")

// Target is a parsed application or hook URL.
type Target struct {
	// Raw is the URL as given, fragment included.
	Raw string
	// URL is the URL that is requested: the fragment is always removed.
	URL *url.URL
	// Policy is the retry policy from the fragment (or inherited, see Resolve).
	Policy Policy
	// IgnoredKeys are fragment keys other than rc and rp, sorted.
	IgnoredKeys []string
	// hasPolicy records whether the URL's own fragment named rc or rp.
	hasPolicy bool
}

// Clean returns the URL without its fragment, as a string.
func (t Target) Clean() string { return t.URL.String() }

// OwnPolicy reports whether the URL's own fragment set rc or rp (as opposed to
// defaults, or a policy inherited from an application URL).
func (t Target) OwnPolicy() bool { return t.hasPolicy }

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidURL, fmt.Sprintf(format, args...))
}

// TransportOf returns the transport for a URL scheme, or an error for any scheme
// other than http, https, ws and wss.
func TransportOf(scheme string) (Transport, error) {
	switch strings.ToLower(scheme) {
	case "http", "https":
		return HTTP, nil
	case "ws", "wss":
		return WebSocket, nil
	case "":
		return "", invalid("missing scheme (want http, https, ws or wss)")
	default:
		return "", invalid("unsupported scheme %q (want http, https, ws or wss)", scheme)
	}
}

// Parse parses an absolute application or hook URL. Invalid `rc` values, unknown
// `rp` classes and undecodable fragment parts are not errors: the default applies and
// Policy.Warnings says why. A malformed URL, an unsupported scheme or a missing host
// is an error wrapping ErrInvalidURL, and so is a URL carrying user-info
// (user:password@; ErrUserInfo too), whose error never quotes it.
func Parse(raw string) (Target, error) {
	u, frag, err := parseAbsolute(raw)
	if err != nil {
		return Target{}, err
	}
	tr, err := TransportOf(u.Scheme)
	if err != nil {
		return Target{}, err
	}
	return fromURL(raw, u, frag, tr)
}

// splitFragment cuts the fragment off raw before url.Parse sees it: url.Parse
// rejects a fragment with a bad escape, which must cost a warning, not the URL.
func splitFragment(raw string) (base, frag string) {
	base, frag, _ = strings.Cut(raw, "#")
	return base, frag
}

// ErrUserInfo is wrapped (beside ErrInvalidURL) by the error of Parse and Resolve
// about a URL that carries user-info (user:password@).
var ErrUserInfo = errors.New("URL carries user-info")

// userInfo returns the user-info of raw, the part of its authority (after the first
// "//", up to the first '/', '?' or '#') up to its last '@', and where it starts. It
// reads the string itself, so that a URL url.Parse refuses is caught too, before any
// error can quote it.
func userInfo(raw string) (ui string, at int, ok bool) {
	i := strings.Index(raw, "//")
	if i < 0 {
		return "", 0, false
	}
	at = i + 2
	rest := raw[at:]
	if j := strings.IndexAny(rest, "/?#"); j >= 0 {
		rest = rest[:j]
	}
	j := strings.LastIndex(rest, "@")
	if j < 0 {
		return "", 0, false
	}
	return rest[:j+1], at, true
}

// Redact returns raw without its user-info (user:password@), for messages and
// views: a URL given with credentials is refused, and the refusal never quotes them.
func Redact(raw string) string {
	if ui, at, ok := userInfo(raw); ok {
		return raw[:at] + raw[at+len(ui):]
	}
	return raw
}

// refuseUserInfo refuses a URL with user-info, naming it without (docs/call-control.md §3).
func refuseUserInfo(raw string) error {
	if _, _, ok := userInfo(raw); !ok {
		return nil
	}
	return fmt.Errorf("%w: %q: %w (user:password@): give the credentials as the hook's username and password instead",
		ErrInvalidURL, Redact(raw), ErrUserInfo)
}

// parseAbsolute parses raw without its fragment, which it returns as written.
func parseAbsolute(raw string) (*url.URL, string, error) {
	if strings.TrimSpace(raw) == "" {
		return nil, "", invalid("empty URL")
	}
	if err := refuseUserInfo(raw); err != nil {
		return nil, "", err
	}
	base, frag := splitFragment(raw)
	u, err := url.Parse(base)
	if err != nil && !strings.Contains(base, "://") {
		// host:port/path without its scheme: url.Parse's own words ("first path
		// segment in URL cannot contain colon") do not say what is missing.
		return nil, "", invalid("%q is not absolute (want http://, https://, ws:// or wss:// before the host)", raw)
	}
	if err != nil {
		return nil, "", invalid("%v", unwrapURLError(err))
	}
	if u.Scheme == "" {
		return nil, "", invalid("%q is not absolute (want http, https, ws or wss)", raw)
	}
	if u.Opaque != "" || u.Host == "" || u.Hostname() == "" {
		return nil, "", invalid("%q has no host", raw)
	}
	return u, frag, nil
}

func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return fmt.Errorf("%s: %w", ue.URL, ue.Err)
	}
	return err
}

// fromURL parses frag, the fragment of raw as written, into a policy for transport
// tr; u is raw without it.
func fromURL(raw string, u *url.URL, frag string, tr Transport) (Target, error) {
	// url.Parse checks that a port is made of digits, not that it can be dialled.
	if port := u.Port(); port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return Target{}, invalid("%q: port %s is out of range (1-65535)", raw, port)
		}
	}
	values, problems := parseFragment(frag)
	clean := *u
	clean.Fragment, clean.RawFragment = "", ""
	p, hasPolicy := policyFromValues(values, tr)
	p.Warnings = append(problems, p.Warnings...)
	var ignored []string
	for k := range values {
		if k != "rc" && k != "rp" {
			ignored = append(ignored, k)
		}
	}
	slices.Sort(ignored)
	return Target{Raw: raw, URL: &clean, Policy: p, IgnoredKeys: ignored, hasPolicy: hasPolicy}, nil
}

// parseFragment decodes the fragment as application/x-www-form-urlencoded pairs
// separated by "&". Unlike url.ParseQuery it never fails: a pair that cannot be
// decoded is skipped with a warning, and a ";" is an ordinary character (so
// "rp=ct;5xx" names the unknown class "ct;5xx"), because an odd fragment must never
// make the application URL itself unusable.
func parseFragment(raw string) (url.Values, []string) {
	values := url.Values{}
	var problems []string
	for _, pair := range strings.Split(raw, "&") {
		if pair == "" {
			continue
		}
		k, v, _ := strings.Cut(pair, "=")
		key, err1 := url.QueryUnescape(k)
		value, err2 := url.QueryUnescape(v)
		if err := errors.Join(err1, err2); err != nil {
			problems = append(problems, fmt.Sprintf("fragment part %q ignored: %v", pair, err))
			continue
		}
		values[key] = append(values[key], value)
	}
	return values, problems
}

func policyFromValues(values url.Values, tr Transport) (Policy, bool) {
	p := DefaultPolicy(tr)
	rcValues, hasRC := values["rc"]
	rpValues, hasRP := values["rp"]
	if hasRC {
		p.parseRetryCount(rcValues)
	}
	if hasRP {
		p.parseRetryOn(rpValues)
	}
	return p, hasRC || hasRP
}

func (p *Policy) warn(format string, args ...any) {
	p.Warnings = append(p.Warnings, fmt.Sprintf(format, args...))
}

func (p *Policy) parseRetryCount(values []string) {
	if len(values) > 1 {
		p.warn("rc given %d times: using the last one", len(values))
	}
	// Only plain digits: "+3" (which form decoding turns into " 3"), "-1" or "2.5"
	// are not non-negative integers.
	v := values[len(values)-1]
	if v == "" || strings.Trim(v, "0123456789") != "" {
		p.warn("rc=%q is not a non-negative integer: using the default %d", v, p.RetryCount)
		return
	}
	n, err := strconv.Atoi(v)
	if err != nil || n > MaxRetryCount {
		// Only overflow can fail here: a huge number of digits is still "above 5".
		p.warn("rc=%s is above %d: using %d", v, MaxRetryCount, MaxRetryCount)
		n = MaxRetryCount
	}
	p.RetryCount, p.RetryCountDefault = n, false
}

func (p *Policy) parseRetryOn(values []string) {
	var found []Class
	for _, v := range values {
		for _, name := range strings.Split(v, ",") {
			name = strings.ToLower(strings.TrimSpace(name))
			if name == "" {
				continue
			}
			c := Class(name)
			if !slices.Contains(knownClasses, c) {
				p.warn("rp class %q is unknown: ignored (known: ct, rt, 4xx, 5xx, all)", name)
				continue
			}
			if !slices.Contains(found, c) {
				found = append(found, c)
			}
		}
	}
	if len(found) == 0 {
		p.warn("rp names no known class: using the default ct")
		return
	}
	// Kept in the order the URL gives them, so an explanation reads like the URL.
	p.RetryOn, p.RetryOnExplicit = found, true
}

// Resolve resolves a hook (absolute, or relative such as "/gather") against the
// application URL it belongs to. The hook's own fragment wins when it sets rc or rp;
// otherwise a relative hook inherits the application's policy and an absolute hook
// gets the defaults of its own transport. The result never carries a fragment.
func Resolve(app Target, hook string) (Target, error) {
	if strings.TrimSpace(hook) == "" {
		return Target{}, invalid("empty hook URL")
	}
	if err := refuseUserInfo(hook); err != nil {
		return Target{}, err
	}
	base, frag := splitFragment(hook)
	ref, err := url.Parse(base)
	if err != nil {
		return Target{}, invalid("hook %v", unwrapURLError(err))
	}
	if ref.IsAbs() {
		return Parse(hook)
	}
	if app.URL == nil {
		return Target{}, invalid("relative hook %q has no application URL to resolve against", hook)
	}
	abs := app.URL.ResolveReference(ref)
	t, err := fromURL(hook, abs, frag, app.Policy.Transport)
	if err != nil {
		return Target{}, err
	}
	if !t.hasPolicy {
		// Without rc or rp its warnings can only be about parts of its fragment that
		// could not be decoded: those stay; the application's own do not repeat.
		warnings := t.Policy.Warnings
		t.Policy = app.Policy
		t.Policy.Warnings = warnings
	}
	return t, nil
}
