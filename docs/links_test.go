package docs

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// The pages whose links are checked: the README and every page of docs/. Other
// issues add pages and link them; each link is checked once its page is here.
func linkedPages(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{filepath.Join("..", "README.md")}, pages...)
}

var (
	// An inline link or image, [text](target) or ![alt](target "title"), and an
	// autolink <http://...>.
	markdownLink = regexp.MustCompile(`!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	fencedBlock  = regexp.MustCompile("(?ms)^```.*?^```")
	inlineCode   = regexp.MustCompile("`[^`\n]*`")
	headingLine  = regexp.MustCompile(`(?m)^#{1,6} (.+)$`)
)

// slug is the anchor GitHub gives a heading: lower case, letters, digits, spaces
// (as hyphens), hyphens and underscores kept, everything else (punctuation,
// backticks, section signs) dropped.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors are the anchors of a Markdown page's headings, numbered as GitHub numbers
// repeated ones (-1, -2, ...).
func anchors(page string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, m := range headingLine.FindAllStringSubmatch(fencedBlock.ReplaceAllString(page, ""), -1) {
		a := slug(m[1])
		if n := seen[a]; n > 0 {
			out[fmt.Sprintf("%s-%d", a, n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

// TestLinksResolve: every relative link of the README and of docs/ names a file or
// directory of the repository, and its #anchor, when it has one, a heading of the
// page it names. Links to other sites are not fetched (the tests run offline).
func TestLinksResolve(t *testing.T) {
	checked := 0
	for _, page := range linkedPages(t) {
		raw, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		// Links inside code are text, not links.
		text := inlineCode.ReplaceAllString(fencedBlock.ReplaceAllString(string(raw), ""), "")
		for _, m := range markdownLink.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if u, err := url.Parse(target); err != nil {
				t.Errorf("%s: link %q does not parse: %v", page, target, err)
				continue
			} else if u.Scheme != "" {
				if u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "mailto" {
					t.Errorf("%s: link %q: scheme %s", page, target, u.Scheme)
				}
				continue
			}
			checked++
			path, anchor, _ := strings.Cut(target, "#")
			dest := page
			if path != "" {
				dest = filepath.Join(filepath.Dir(page), filepath.FromSlash(path))
				if _, err := os.Stat(dest); err != nil {
					t.Errorf("%s: link %q: no %s", page, target, dest)
					continue
				}
			}
			if anchor == "" {
				continue
			}
			if filepath.Ext(dest) != ".md" {
				t.Errorf("%s: link %q: an anchor on a file that is not Markdown", page, target)
				continue
			}
			body, err := os.ReadFile(dest)
			if err != nil {
				t.Errorf("%s: link %q: %v", page, target, err)
				continue
			}
			if !anchors(string(body))[anchor] {
				t.Errorf("%s: link %q: %s has no heading whose anchor is #%s", page, target, dest, anchor)
			}
		}
		for _, m := range regexp.MustCompile(`<(https?://[^>\s]+)>`).FindAllStringSubmatch(text, -1) {
			if _, err := url.Parse(m[1]); err != nil {
				t.Errorf("%s: autolink %q: %v", page, m[1], err)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no relative link found: the test read nothing")
	}
}

// TestSlug: anchors as GitHub makes them.
func TestSlug(t *testing.T) {
	for heading, want := range map[string]string{
		"\u00a74b. Time on a node and in the simulator": "4b-time-on-a-node-and-in-the-simulator",
		"`test --json` events":                          "test---json-events",
		"Webhooks: the outbox API":                      "webhooks-the-outbox-api",
		"`switchboard webhooks`":                        "switchboard-webhooks",
		"Logs, metrics and version":                     "logs-metrics-and-version",
	} {
		if got := slug(heading); got != want {
			t.Errorf("slug(%q) = %q, want %q", heading, got, want)
		}
	}
}

// TestReferencePagesHaveContents: each page a user reads to find something has a
// table of contents linking every one of its sections.
func TestReferencePagesHaveContents(t *testing.T) {
	for _, page := range []string{"cli.md", "operators.md", "rest-api.md", "call-control.md", "outbox.md", "BENCHMARKS.md", "architecture.md"} {
		raw, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		text := fencedBlock.ReplaceAllString(string(raw), "")
		i := strings.Index(text, "\n## Contents\n")
		if i < 0 {
			t.Errorf("%s has no ## Contents", page)
			continue
		}
		toc := text[i:]
		if j := strings.Index(toc[len("\n## Contents\n"):], "\n## "); j >= 0 {
			toc = toc[:len("\n## Contents\n")+j]
		}
		for _, m := range regexp.MustCompile(`(?m)^## (.+)$`).FindAllStringSubmatch(text, -1) {
			if m[1] != "Contents" && !strings.Contains(toc, "(#"+slug(m[1])+")") {
				t.Errorf("%s: the contents do not link the section %q", page, m[1])
			}
		}
	}
}
