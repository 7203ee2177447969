package nodeapi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore"
)

// PortalPath is where a magic link opens the consumer portal: the console's path
// followed by the link's secret.
const PortalPath = "/console/portal/"

// Bounds of a magic link's life (docs/outbox.md §9).
const (
	minPortalLinkTTL     = time.Minute
	maxPortalLinkTTL     = 24 * time.Hour
	defaultPortalLinkTTL = 10 * time.Minute
	maxPortalEndpoints   = 100
	maxFrameAncestors    = 20
)

type portalLinkInput struct {
	AccountParams
	Body struct {
		Endpoints  []string `json:"endpoints,omitempty" maxItems:"100" doc:"Confine the portal to these endpoints of the account; none: every endpoint, and the consumer may create some"`
		TTLSeconds int      `json:"ttlSeconds,omitempty" minimum:"60" maximum:"86400" doc:"How long the link opens the portal, used or not; default 600"`
	}
	base string // where the caller reached the node: the link's scheme and host
}

// Resolve takes the link's base from the request: the host it was sent to, HTTPS
// when it came over TLS or through a proxy that says so.
func (in *portalLinkInput) Resolve(ctx huma.Context) []error {
	scheme := "http"
	if ctx.TLS() != nil || strings.EqualFold(ctx.Header("X-Forwarded-Proto"), "https") {
		scheme = "https"
	}
	in.base = scheme + "://" + ctx.Host()
	return nil
}

// PortalLink answers a minted magic link.
type PortalLink struct {
	ID        string    `json:"id" doc:"The link's id: the audit log names changes made through its session portal:<id>"`
	URL       string    `json:"url" doc:"The magic link: give it to the consumer once; it opens one session"`
	Path      string    `json:"path" doc:"The link's path, for a program that knows the node's public address better than the Host it was reached at"`
	ExpiresAt time.Time `json:"expiresAt"`
	Endpoints []string  `json:"endpoints" doc:"The endpoints it is confined to; empty: every endpoint of the account"`
}

type portalLinkOutput struct{ Body PortalLink }

// PortalSettings are an account's consumer portal settings on the wire.
type PortalSettings struct {
	FrameAncestors []string `json:"frameAncestors" maxItems:"20" doc:"Origins (scheme://host[:port]) whose pages may frame the portal (CSP frame-ancestors); none: no page may"`
}

type portalSettingsInput struct {
	AccountParams
	Body PortalSettings
}

type portalSettingsOutput struct{ Body PortalSettings }

// registerPortal serves the consumer portal's magic links and settings
// (docs/outbox.md §9): the account's token or the admin token may use them.
func (a *API) registerPortal(api huma.API) {
	huma.Register(api, huma.Operation{
		OperationID: "create-portal-link", Method: http.MethodPost, Path: "/v1/Accounts/{account}/PortalLinks",
		Summary:       "Mint a single-use, short-lived magic link into the account's consumer portal",
		DefaultStatus: http.StatusCreated, MaxBodyBytes: maxRequestBody,
	}, func(ctx context.Context, in *portalLinkInput) (*portalLinkOutput, error) {
		acct, actor, err := a.accountOrAdmin(ctx, in.AccountParams)
		if err != nil {
			return nil, err
		}
		ttl := defaultPortalLinkTTL
		if in.Body.TTLSeconds != 0 {
			ttl = time.Duration(in.Body.TTLSeconds) * time.Second
		}
		endpoints, err := uniqueEndpoints(in.Body.Endpoints)
		if err != nil {
			return nil, err
		}
		if a.checkEndpoints != nil && len(endpoints) > 0 {
			if i, err := a.checkEndpoints(ctx, acct.Sid, endpoints); err != nil {
				if i >= 0 {
					return nil, huma.Error422UnprocessableEntity("invalid endpoints", &huma.ErrorDetail{
						Location: fmt.Sprintf("body.endpoints[%d]", i), Message: "no such endpoint of the account", Value: endpoints[i]})
				}
				return nil, a.internal(err)
			}
		}
		secret, id := rand.Text(), make([]byte, 8)
		_, _ = rand.Read(id)
		now := a.clock.Now().UTC().Truncate(time.Millisecond)
		link := nodestore.PortalLink{IDHash: nodestore.HashToken(secret), ID: "pl_" + hex.EncodeToString(id), AccountSid: acct.Sid,
			Endpoints: endpoints, CreatedBy: actor, CreatedAt: now, ExpiresAt: now.Add(ttl)}
		if err := a.store.CreatePortalLink(ctx, link); err != nil {
			return nil, a.notFoundOr(err, "account")
		}
		path := PortalPath + secret
		return &portalLinkOutput{Body: PortalLink{ID: link.ID, URL: in.base + path, Path: path, ExpiresAt: link.ExpiresAt,
			Endpoints: nonNilStrings(endpoints)}}, nil
	})
	huma.Register(api, huma.Operation{
		OperationID: "get-portal-settings", Method: http.MethodGet, Path: "/v1/Accounts/{account}/Portal",
		Summary: "The account's consumer portal settings: which origins may frame it",
	}, func(ctx context.Context, in *struct{ AccountParams }) (*portalSettingsOutput, error) {
		acct, _, err := a.accountOrAdmin(ctx, in.AccountParams)
		if err != nil {
			return nil, err
		}
		s, err := a.store.GetPortalSettings(ctx, acct.Sid)
		if err != nil {
			return nil, a.internal(err)
		}
		return &portalSettingsOutput{Body: PortalSettings{FrameAncestors: nonNilStrings(s.FrameAncestors)}}, nil
	})
	huma.Register(api, huma.Operation{
		OperationID: "set-portal-settings", Method: http.MethodPut, Path: "/v1/Accounts/{account}/Portal",
		Summary: "Set which origins may frame the account's consumer portal", MaxBodyBytes: maxRequestBody,
	}, func(ctx context.Context, in *portalSettingsInput) (*portalSettingsOutput, error) {
		acct, _, err := a.accountOrAdmin(ctx, in.AccountParams)
		if err != nil {
			return nil, err
		}
		origins := make([]string, 0, len(in.Body.FrameAncestors))
		for i, o := range in.Body.FrameAncestors {
			norm, err := ParseOrigin(o)
			if err != nil {
				return nil, huma.Error422UnprocessableEntity("invalid portal settings", &huma.ErrorDetail{
					Location: fmt.Sprintf("body.frameAncestors[%d]", i), Message: err.Error(), Value: o})
			}
			origins = append(origins, norm)
		}
		if err := a.store.SavePortalSettings(ctx, nodestore.PortalSettings{AccountSid: acct.Sid, FrameAncestors: origins}); err != nil {
			return nil, a.internal(err)
		}
		return &portalSettingsOutput{Body: PortalSettings{FrameAncestors: origins}}, nil
	})
}

// accountOrAdminOperations are the operations on an account that the admin token
// may make too.
var accountOrAdminOperations = map[string]bool{"create-portal-link": true, "get-portal-settings": true, "set-portal-settings": true}

// isAdmin reports whether an Authorization header carries the admin token.
func (a *API) isAdmin(header string) bool {
	token := bearer(header)
	return token != "" && a.admin != "" && sameSecret(token, a.admin)
}

// accountOrAdmin authorizes a request on the account of p with the account's own
// token (its API tokens) or the admin token, and names who asked.
func (a *API) accountOrAdmin(ctx context.Context, p AccountParams) (nodestore.Account, string, error) {
	if a.isAdmin(p.Authorization) {
		acct, err := a.store.GetAccount(ctx, p.Account)
		if err != nil {
			return nodestore.Account{}, "", a.notFoundOr(err, "account")
		}
		return acct, "admin", nil
	}
	acct, err := a.authorize(ctx, p)
	if err != nil {
		return nodestore.Account{}, "", err
	}
	return acct, "tok_" + nodestore.HashToken(bearer(p.Authorization))[:16], nil
}

// uniqueEndpoints drops repeated ids, keeping the order; an empty id is bad input.
func uniqueEndpoints(ids []string) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	for i, id := range ids {
		if id == "" || len(id) > 128 {
			return nil, huma.Error422UnprocessableEntity("invalid endpoints", &huma.ErrorDetail{
				Location: fmt.Sprintf("body.endpoints[%d]", i), Message: "an endpoint id of 1 to 128 characters", Value: id})
		}
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out, nil
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// ErrBadOrigin is wrapped by ParseOrigin's errors.
var ErrBadOrigin = errors.New("not an origin")

// ParseOrigin reads an origin a page may frame the portal from: http or https, a
// host and an optional port, nothing else (no path, query, fragment or user-info;
// a trailing "/" is dropped). It returns the origin as a CSP source writes it:
// lower-case scheme and host, the port only when given.
func ParseOrigin(s string) (string, error) {
	u, err := url.Parse(strings.TrimSuffix(strings.TrimSpace(s), "/"))
	switch {
	case err != nil:
		return "", fmt.Errorf("%w: %v", ErrBadOrigin, err)
	case u.Scheme != "http" && u.Scheme != "https":
		return "", fmt.Errorf("%w: want http:// or https://", ErrBadOrigin)
	case u.Host == "" || u.Opaque != "":
		return "", fmt.Errorf("%w: want scheme://host[:port]", ErrBadOrigin)
	case u.User != nil || u.Path != "" || u.RawQuery != "" || u.Fragment != "" || u.ForceQuery || strings.Contains(s, "#"):
		return "", fmt.Errorf("%w: an origin has no user-info, path, query or fragment", ErrBadOrigin)
	}
	host := strings.ToLower(u.Hostname())
	if host == "" || strings.ContainsAny(host, " ;,'\"*") {
		return "", fmt.Errorf("%w: bad host", ErrBadOrigin)
	}
	if port := u.Port(); port != "" {
		if !validPort(port) {
			return "", fmt.Errorf("%w: bad port %q", ErrBadOrigin, port)
		}
		if strings.Contains(host, ":") {
			host = "[" + host + "]"
		}
		return strings.ToLower(u.Scheme) + "://" + host + ":" + port, nil
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return strings.ToLower(u.Scheme) + "://" + host, nil
}

func validPort(p string) bool {
	if len(p) == 0 || len(p) > 5 {
		return false
	}
	n := 0
	for _, c := range p {
		if c < '0' || c > '9' {
			return false
		}
		n = n*10 + int(c-'0')
	}
	return n >= 1 && n <= 65535
}
