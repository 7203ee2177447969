package console

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"errors"
	"html/template"
	"io/fs"
	"net/http"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/switchboard-voice/switchboard/featureserver/internal/nodeapi"
	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore"
	"github.com/switchboard-voice/switchboard/retry"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Prefix is where the console is served.
const Prefix = "/console/"

// cookieName holds the session's secret, a random value whose hash names the
// session in the node's database (nodestore.Session): the API token never leaves
// the node, and signing out ends the session on every node for every copy of the
// cookie.
const cookieName = "switchboard_session"

// contentSecurityPolicy allows the console's own scripts, styles and images and
// nothing inline, no plugin, no framing, and forms posting to itself only.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// Options configure the console. Zero values take the defaults documented per field.
type Options struct {
	// API serves the node's HTTP API (nodeapi.Handler of the mux the call API and the
	// outbox API are registered on); the console calls it in-process. Required.
	API http.Handler
	// Sessions keeps the console's sessions: the node's store, so that a session
	// works on every node sharing the database and survives a restart. Required.
	Sessions SessionStore
	// SessionIdle ends a session unused for this long. Default 1 h.
	SessionIdle time.Duration
	// SessionLifetime ends a session this long after its sign-in, however used.
	// Default 12 h.
	SessionLifetime time.Duration
	// MaxSessionsPerAccount bounds an account's sessions: a sign-in past it ends the
	// account's least recently used session, never another account's. Default 20.
	MaxSessionsPerAccount int
	// Clock tells the time of "ago", of sessions and of the default recover window.
	// Default the wall clock.
	Clock retry.Clock
	// Logger receives the errors rendered as 500. Default: the zero Logger.
	Logger zerolog.Logger
}

// SessionStore keeps console sessions (nodestore.Store's methods of them).
type SessionStore interface {
	CreateSession(ctx context.Context, p nodestore.CreateSessionParams) error
	GetSession(ctx context.Context, idHash string) (nodestore.Session, error)
	TouchSession(ctx context.Context, p nodestore.TouchSessionParams) error
	DeleteSession(ctx context.Context, idHash string) error
}

// WithDefaults returns o with every zero value replaced by its default.
func (o Options) WithDefaults() Options {
	if o.Clock == nil {
		o.Clock = retry.SystemClock{}
	}
	if o.SessionIdle == 0 {
		o.SessionIdle = time.Hour
	}
	if o.SessionLifetime == 0 {
		o.SessionLifetime = 12 * time.Hour
	}
	if o.MaxSessionsPerAccount == 0 {
		o.MaxSessionsPerAccount = 20
	}
	return o
}

func (o Options) validate() error {
	var errs []error
	if o.API == nil {
		errs = append(errs, errors.New("console: Options.API is required"))
	}
	if o.Sessions == nil {
		errs = append(errs, errors.New("console: Options.Sessions is required"))
	}
	if o.SessionIdle < time.Minute || o.SessionLifetime < o.SessionIdle {
		errs = append(errs, errors.New("console: Options.SessionIdle must be at least 1 min and SessionLifetime at least SessionIdle"))
	}
	if o.MaxSessionsPerAccount < 1 {
		errs = append(errs, errors.New("console: Options.MaxSessionsPerAccount must be at least 1"))
	}
	return errors.Join(errs...)
}

// Console serves the web console under Prefix.
type Console struct {
	opts  Options
	pages map[string]*template.Template
	mux   *http.ServeMux
	cop   *http.CrossOriginProtection
}

// New returns the console of o; a bad option is an error naming it.
func New(o Options) (*Console, error) {
	o = o.WithDefaults()
	if err := o.validate(); err != nil {
		return nil, err
	}
	c := &Console{opts: o, mux: http.NewServeMux(), cop: http.NewCrossOriginProtection()}
	if err := c.parseTemplates(); err != nil {
		return nil, err
	}
	c.cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.renderStatus(w, r, http.StatusForbidden, nil, "cross-origin request refused: submit the console's forms from the console itself")
	}))
	static, _ := fs.Sub(staticFS, "static")
	c.mux.Handle("GET /console/static/", http.StripPrefix("/console/static/", cacheStatic(http.FileServerFS(static))))
	c.routes()
	return c, nil
}

// ServeHTTP serves a console request: security headers on every answer, cross-origin
// POSTs refused before any handler runs.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	if !strings.HasPrefix(r.URL.Path, "/console/static/") {
		h.Set("Cache-Control", "no-store")
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	c.cop.Handler(c.mux).ServeHTTP(w, r)
}

// maxForm bounds a form post: a policy or an event filter is small.
const maxForm = 64 << 10

func cacheStatic(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=3600")
		next.ServeHTTP(w, r)
	})
}

// session is a signed-in account.
type session struct {
	api        apiClient
	AccountSid string
	Name       string
	CSRF       string
}

// csrfToken is the form token of a session: an HMAC of a fixed label under the
// session's secret, so a page of another origin (which never sees the cookie)
// cannot forge it, and every node computes the same.
func csrfToken(secret string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte("switchboard console form"))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// whoami asks the API which account api acts for; header is the answer's.
func (c *Console) whoami(ctx context.Context, api apiClient) (accountSid, name string, header http.Header, err error) {
	var me struct {
		AccountSid string `json:"account_sid"`
		Name       string `json:"name"`
	}
	header, err = api.get(ctx, "/v1/Me", nil, &me)
	return me.AccountSid, me.Name, header, err
}

// forSession serves a page only to a signed-in session (signedIn), with that
// session; anyone else is sent to sign in, or answered as signedIn says.
func (c *Console) forSession(page func(w http.ResponseWriter, r *http.Request, s session)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s, ok := c.signedIn(w, r); ok {
			page(w, r, s)
		}
	}
}

// touchEvery is how stale a session's last use may get before a request records
// it: the idle timeout is that much less exact, and browsing costs a write a
// minute at most.
const touchEvery = time.Minute

// signedIn is the request's session; without a live one (unknown, idle past
// SessionIdle, past SessionLifetime, or its API token revoked) it redirects to the
// sign-in page and ok is false. A POST must carry the session's form token.
func (c *Console) signedIn(w http.ResponseWriter, r *http.Request) (session, bool) {
	ck, err := r.Cookie(cookieName)
	if err != nil || ck.Value == "" {
		c.toSignIn(w, r, "")
		return session{}, false
	}
	idHash := nodestore.HashToken(ck.Value)
	stored, err := c.opts.Sessions.GetSession(r.Context(), idHash)
	if errors.Is(err, nodestore.ErrNotFound) {
		clearCookie(w, r)
		c.toSignIn(w, r, "")
		return session{}, false
	}
	if err != nil {
		c.fail(w, r, nil, err)
		return session{}, false
	}
	now := c.opts.Clock.Now()
	if !now.Before(stored.ExpiresAt) || now.Sub(stored.LastSeenAt) >= c.opts.SessionIdle {
		c.endSession(r, idHash)
		clearCookie(w, r)
		c.toSignIn(w, r, "expired")
		return session{}, false
	}
	api := apiClient{h: c.opts.API, caller: &nodeapi.Caller{Account: stored.AccountSid, TokenHash: stored.TokenHash}}
	s := session{api: api, CSRF: csrfToken(ck.Value)}
	if s.AccountSid, s.Name, _, err = c.whoami(r.Context(), api); err != nil {
		if statusOf(err) == http.StatusUnauthorized {
			c.endSession(r, idHash)
			clearCookie(w, r)
			c.toSignIn(w, r, "")
		} else {
			c.fail(w, r, nil, err)
		}
		return session{}, false
	}
	if now.Sub(stored.LastSeenAt) >= touchEvery {
		if err := c.opts.Sessions.TouchSession(r.Context(), nodestore.TouchSessionParams{IDHash: idHash, At: now}); err != nil &&
			!errors.Is(err, nodestore.ErrNotFound) {
			c.opts.Logger.Warn().Err(err).Msg("console: recording a session's use failed")
		}
	}
	if r.Method == http.MethodPost && !hmac.Equal([]byte(r.PostFormValue("csrf")), []byte(s.CSRF)) {
		c.renderStatus(w, r, http.StatusForbidden, &s, "the form's token is missing or stale: reload the page and submit it again")
		return session{}, false
	}
	return s, true
}

// StartSession signs the browser of r in as account: it stores a new session and
// sets its cookie on w. tokenHash, when set, is the HashToken of the API token the
// browser proved: revoking that token ends the session. A sign-in past the
// account's MaxSessionsPerAccount ends its least recently used session.
func (c *Console) StartSession(w http.ResponseWriter, r *http.Request, account, tokenHash string) error {
	secret := rand.Text()
	now := c.opts.Clock.Now()
	err := c.opts.Sessions.CreateSession(r.Context(), nodestore.CreateSessionParams{
		Session: nodestore.Session{IDHash: nodestore.HashToken(secret), AccountSid: account, TokenHash: tokenHash,
			CreatedAt: now, LastSeenAt: now, ExpiresAt: now.Add(c.opts.SessionLifetime)},
		MaxPerAccount: c.opts.MaxSessionsPerAccount})
	if err != nil {
		return err
	}
	http.SetCookie(w, sessionCookie(r, secret, int(c.opts.SessionLifetime.Seconds())))
	return nil
}

// endSession deletes a session; one already gone is no error.
func (c *Console) endSession(r *http.Request, idHash string) {
	if err := c.opts.Sessions.DeleteSession(r.Context(), idHash); err != nil && !errors.Is(err, nodestore.ErrNotFound) {
		c.opts.Logger.Warn().Err(err).Msg("console: ending a session failed")
	}
}

// toSignIn sends a request without a live session to the sign-in page, saying why
// when done is set (a notice of the page).
func (c *Console) toSignIn(w http.ResponseWriter, r *http.Request, done string) {
	if r.Method != http.MethodGet {
		c.renderStatus(w, r, http.StatusUnauthorized, nil, "not signed in")
		return
	}
	target := "/console/signin"
	if done != "" {
		target += "?done=" + done
	}
	http.Redirect(w, r, target, http.StatusSeeOther)
}

// sessionCookie is Secure when the browser reached the console over HTTPS: directly,
// or through a proxy that says so (X-Forwarded-Proto). A client that forges the
// header on plain HTTP only loses its own cookie.
func sessionCookie(r *http.Request, value string, maxAge int) *http.Cookie {
	https := r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https")
	return &http.Cookie{Name: cookieName, Value: value, Path: "/console", MaxAge: maxAge,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: https}
}

func clearCookie(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, sessionCookie(r, "", -1))
}
