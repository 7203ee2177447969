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
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/switchboard-voice/switchboard/retry"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Prefix is where the console is served.
const Prefix = "/console/"

// cookieName holds the session's id, a random value the console maps to the
// account's API token: the token itself never leaves the node, and signing out
// ends the session for every copy of the cookie.
const cookieName = "switchboard_session"

// sessionLifetime bounds a session cookie; signing in again renews it.
const sessionLifetime = 12 * time.Hour

// contentSecurityPolicy allows the console's own scripts, styles and images and
// nothing inline, no plugin, no framing, and forms posting to itself only.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// Options configure the console. Zero values take the defaults documented per field.
type Options struct {
	// API serves the node's HTTP API (nodeapi.Handler of the mux the call API and the
	// outbox API are registered on); the console calls it in-process. Required.
	API http.Handler
	// Clock tells the time of "ago" and of the default recover window. Default the
	// wall clock.
	Clock retry.Clock
	// Logger receives the errors rendered as 500. Default: the zero Logger.
	Logger zerolog.Logger
}

// WithDefaults returns o with every zero value replaced by its default.
func (o Options) WithDefaults() Options {
	if o.Clock == nil {
		o.Clock = retry.SystemClock{}
	}
	return o
}

func (o Options) validate() error {
	if o.API == nil {
		return errors.New("console: Options.API is required")
	}
	return nil
}

// Console serves the web console under Prefix.
type Console struct {
	opts     Options
	pages    map[string]*template.Template
	mux      *http.ServeMux
	cop      *http.CrossOriginProtection
	sessions sessions
}

// sessions maps session ids to API tokens, in memory: a node restart signs
// everyone out, which is the safe direction.
type sessions struct {
	mu   sync.Mutex
	byID map[string]sessionEntry
}

type sessionEntry struct {
	token   string
	expires time.Time
}

// maxSessions bounds the map against sign-in floods; the oldest sessions go first
// once expired ones are gone.
const maxSessions = 10_000

// start records a new session for token and returns its id.
func (s *sessions) start(token string, now time.Time) string {
	id := rand.Text()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byID == nil {
		s.byID = map[string]sessionEntry{}
	}
	if len(s.byID) >= maxSessions {
		var oldest string
		for k, e := range s.byID {
			if !now.Before(e.expires) {
				delete(s.byID, k)
			} else if oldest == "" || e.expires.Before(s.byID[oldest].expires) {
				oldest = k
			}
		}
		if len(s.byID) >= maxSessions {
			delete(s.byID, oldest)
		}
	}
	s.byID[id] = sessionEntry{token: token, expires: now.Add(sessionLifetime)}
	return id
}

// token is the API token of a live session id.
func (s *sessions) token(id string, now time.Time) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.byID[id]
	if !ok || !now.Before(e.expires) {
		delete(s.byID, id)
		return "", false
	}
	return e.token, true
}

func (s *sessions) end(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.byID, id)
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
// session's API token, so a page of another origin (which never sees the token)
// cannot forge it, and it needs no server-side state.
func csrfToken(token string) string {
	m := hmac.New(sha256.New, []byte(token))
	m.Write([]byte("switchboard console form"))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// whoami resolves an API token through the API: the account it belongs to.
func (c *Console) whoami(ctx context.Context, token string) (session, error) {
	s := session{api: apiClient{h: c.opts.API, token: token}, CSRF: csrfToken(token)}
	var me struct {
		AccountSid string `json:"account_sid"`
		Name       string `json:"name"`
	}
	if _, err := s.api.get(ctx, "/v1/Me", nil, &me); err != nil {
		return session{}, err
	}
	s.AccountSid, s.Name = me.AccountSid, me.Name
	return s, nil
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

// signedIn is the request's session; without one (or with a token the API no
// longer knows) it redirects to the sign-in page and ok is false. A POST must
// carry the session's form token.
func (c *Console) signedIn(w http.ResponseWriter, r *http.Request) (session, bool) {
	ck, err := r.Cookie(cookieName)
	if err != nil || ck.Value == "" {
		c.toSignIn(w, r)
		return session{}, false
	}
	token, live := c.sessions.token(ck.Value, c.opts.Clock.Now())
	if !live {
		clearCookie(w, r)
		c.toSignIn(w, r)
		return session{}, false
	}
	s, err := c.whoami(r.Context(), token)
	if err != nil {
		if statusOf(err) == http.StatusUnauthorized {
			c.sessions.end(ck.Value)
			clearCookie(w, r)
			c.toSignIn(w, r)
		} else {
			c.fail(w, r, nil, err)
		}
		return session{}, false
	}
	if r.Method == http.MethodPost && !hmac.Equal([]byte(r.PostFormValue("csrf")), []byte(s.CSRF)) {
		c.renderStatus(w, r, http.StatusForbidden, &s, "the form's token is missing or stale: reload the page and submit it again")
		return session{}, false
	}
	return s, true
}

func (c *Console) toSignIn(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		c.renderStatus(w, r, http.StatusUnauthorized, nil, "not signed in")
		return
	}
	http.Redirect(w, r, "/console/signin", http.StatusSeeOther)
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
