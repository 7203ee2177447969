package console

import (
	"bytes"
	"fmt"
	"html/template"
	"net/http"
	"path"
	"strings"
	"time"
)

// view is what every page template gets.
type view struct {
	Title   string
	Nav     string
	Session *session
	Notice  string
	Error   string
	Now     time.Time
	Data    any
}

func (c *Console) parseTemplates() error {
	funcs := template.FuncMap{
		"when": func(t any) string {
			switch v := t.(type) {
			case time.Time:
				if v.IsZero() {
					return "—"
				}
				return v.UTC().Format("2006-01-02 15:04:05Z")
			case *time.Time:
				if v == nil {
					return "—"
				}
				return v.UTC().Format("2006-01-02 15:04:05Z")
			}
			return fmt.Sprint(t)
		},
		"ago": func(t *time.Time) string {
			if t == nil {
				return ""
			}
			return roughly(c.opts.Clock.Now().Sub(*t))
		},
		"str": func(s *string) string {
			if s == nil {
				return ""
			}
			return *s
		},
		"join":      strings.Join,
		"ms":        func(f float64) string { return fmt.Sprintf("%.1f ms", f) },
		"esc":       esc,
		"lower":     strings.ToLower,
		"hasPrefix": strings.HasPrefix,
	}
	layout, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html")
	if err != nil {
		return err
	}
	names, err := templateNames()
	if err != nil {
		return err
	}
	c.pages = map[string]*template.Template{}
	for _, name := range names {
		t, err := template.Must(layout.Clone()).ParseFS(templateFS, "templates/"+name)
		if err != nil {
			return err
		}
		c.pages[strings.TrimSuffix(name, ".html")] = t
	}
	return nil
}

func templateNames() ([]string, error) {
	entries, err := templateFS.ReadDir("templates")
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if n := e.Name(); n != "layout.html" && path.Ext(n) == ".html" {
			names = append(names, n)
		}
	}
	return names, nil
}

// roughly renders a duration for people: "3 min ago", "in 2 h".
func roughly(d time.Duration) string {
	suffix := " ago"
	if d < 0 {
		d, suffix = -d, ""
	}
	var s string
	switch {
	case d < time.Minute:
		s = fmt.Sprintf("%d s", int(d.Seconds()))
	case d < time.Hour:
		s = fmt.Sprintf("%d min", int(d.Minutes()))
	case d < 48*time.Hour:
		s = fmt.Sprintf("%d h", int(d.Hours()))
	default:
		s = fmt.Sprintf("%d d", int(d.Hours()/24))
	}
	if suffix == "" {
		return "in " + s
	}
	return s + suffix
}

// render writes page with status; a template error is logged and answers 500.
func (c *Console) render(w http.ResponseWriter, status int, page string, v view) {
	v.Now = c.opts.Clock.Now()
	t, ok := c.pages[page]
	if !ok {
		c.opts.Logger.Error().Str("page", page).Msg("console: no such page template")
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "layout", v); err != nil {
		c.opts.Logger.Error().Err(err).Str("page", page).Msg("console: rendering a page failed")
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// renderStatus renders the error page with status and msg.
func (c *Console) renderStatus(w http.ResponseWriter, _ *http.Request, status int, s *session, msg string) {
	c.render(w, status, "error", view{Title: http.StatusText(status), Session: s, Error: msg, Data: status})
}

// fail renders an error of the API with its status (404 stays 404: another
// account's object is not found); anything else is logged and answers 500.
func (c *Console) fail(w http.ResponseWriter, r *http.Request, s *session, err error) {
	status := statusOf(err)
	msg := err.Error()
	if _, ok := err.(*apiError); !ok || status >= 500 {
		c.opts.Logger.Error().Err(err).Str("path", r.URL.Path).Msg("console: request failed")
		msg = "internal error"
	}
	c.renderStatus(w, r, status, s, msg)
}

// notices are the fixed messages a redirect after a successful action may name
// (?done=...): the page never echoes text from its URL.
var notices = map[string]string{
	"created":   "Endpoint created.",
	"updated":   "Endpoint updated.",
	"paused":    "Endpoint paused.",
	"resumed":   "Endpoint resumed.",
	"pinged":    "Ping sent.",
	"removed":   "Endpoint removed.",
	"retried":   "Delivery queued again.",
	"recovered": "Failed deliveries queued again.",
	"hangup":    "Hanging up the call.",
	"redirect":  "Redirecting the call.",
	"signedout": "Signed out.",
	"expired":   "Your session ended: sign in again.",
}

func notice(r *http.Request) string { return notices[r.URL.Query().Get("done")] }
