package console

import (
	"errors"
	"net/http"
	"strings"

	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore"
)

// The consumer portal (docs/outbox.md §9): a magic link opens a session of the
// account confined to its endpoints (or some of them), which sees the endpoint and
// delivery pages and nothing else, and which the account's listed origins may frame.

// redeemPortal opens the portal's session of a magic link, once, and sends the
// browser to its endpoints.
func (c *Console) redeemPortal(w http.ResponseWriter, r *http.Request) {
	if c.opts.Portal == nil {
		c.renderStatus(w, r, http.StatusNotFound, nil, "no such page")
		return
	}
	link, err := c.opts.Portal.RedeemPortalLink(r.Context(), nodestore.RedeemPortalLinkParams{
		IDHash: nodestore.HashToken(r.PathValue("secret")), Now: c.opts.Clock.Now()})
	if errors.Is(err, nodestore.ErrNotFound) {
		c.renderStatus(w, r, http.StatusNotFound, nil, "This link was used already or has expired: ask for a new one.")
		return
	}
	if err != nil {
		c.fail(w, r, nil, err)
		return
	}
	if err := c.framePortal(w, r, link.AccountSid); err != nil {
		c.fail(w, r, nil, err)
		return
	}
	scope := &nodestore.PortalScope{LinkID: link.ID, Endpoints: link.Endpoints}
	if err := c.startSession(w, r, nodestore.Session{AccountSid: link.AccountSid, Portal: scope}); err != nil {
		c.fail(w, r, nil, err)
		return
	}
	target := "/console/endpoints"
	if len(link.Endpoints) == 1 {
		target += "/" + esc(link.Endpoints[0])
	}
	http.Redirect(w, r, target, http.StatusSeeOther)
}

// framePortal lets the origins the account lists frame the answer (CSP
// frame-ancestors); with none listed, no page may.
func (c *Console) framePortal(w http.ResponseWriter, r *http.Request, account string) error {
	s, err := c.opts.Portal.GetPortalSettings(r.Context(), account)
	if err != nil {
		return err
	}
	if len(s.FrameAncestors) == 0 {
		return nil // the console's own policy: frame-ancestors 'none'
	}
	h := w.Header()
	h.Set("Content-Security-Policy", strings.Replace(contentSecurityPolicy, "frame-ancestors 'none'",
		"frame-ancestors "+strings.Join(s.FrameAncestors, " "), 1))
	// X-Frame-Options has no list of origins: CSP says it, and browsers that know
	// frame-ancestors ignore X-Frame-Options anyway.
	h.Del("X-Frame-Options")
	return nil
}

// portalPage reports whether a portal's session may open r's page: its endpoints,
// their deliveries and actions, and signing out.
func portalPage(r *http.Request) bool {
	p := r.URL.Path
	return p == "/console/" || p == "/console/signout" || p == "/console/endpoints" || strings.HasPrefix(p, "/console/endpoints/")
}

// portalCookie makes a portal session's cookie reach a frame on another site: over
// HTTPS, SameSite=None with Secure, in the embedding site's partition (CHIPS), as
// browsers that block third-party cookies still allow. Over plain HTTP a browser
// refuses SameSite=None, so the cookie stays Lax: framing then works from the same
// site only.
func portalCookie(ck *http.Cookie) {
	if ck.Secure {
		ck.SameSite, ck.Partitioned = http.SameSiteNoneMode, true
	} else {
		ck.SameSite = http.SameSiteLaxMode
	}
}
