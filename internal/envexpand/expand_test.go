package envexpand_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/parser"

	"github.com/switchboard-voice/switchboard/internal/envexpand"
	"github.com/switchboard-voice/switchboard/internal/testkit"
)

// env is a lookup of a fixed environment.
func env(vars map[string]string) envexpand.Lookup {
	return func(name string) (string, bool) {
		v, ok := vars[name]
		return v, ok
	}
}

var testEnv = env(map[string]string{"HOST": "ci", "PORT": "8080", "EMPTY": "", "N": "3", "_x1": "y", "COLON": "a: b", "HASH": "1 # no"})

func TestString(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"http://${HOST}:${PORT}/call", "http://ci:8080/call"},
		{"${HOST:-local}", "ci"},
		{"${MISSING:-127.0.0.1}:${EMPTY:-3000}", "127.0.0.1:3000"},
		{"${EMPTY}", ""},
		{"${MISSING:-}", ""},
		{"${_x1}", "y"},
		{"${MISSING:-a:-b}", "a:-b"},
		{"$HOST $5 $ {HOST} $}", "$HOST $5 $ {HOST} $}"},
		{"$${HOST} costs $$5", "${HOST} costs $$5"},
		{"$$${HOST}", "$${HOST}"}, // "$" then an escaped "${"
		{"no references", "no references"},
	} {
		if got, err := envexpand.String(tc.in, testEnv); err != nil || got != tc.want {
			t.Errorf("String(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for _, tc := range []struct {
		in, contains string
		is           error
	}{
		{"${MISSING}", "MISSING is not set (give a default: ${MISSING:-value})", envexpand.ErrUnset},
		{"x ${HOST", `"${HOST" has no closing }`, envexpand.ErrSyntax},
		{"${}", "${}", envexpand.ErrSyntax},
		{"${1X}", "${1X}", envexpand.ErrSyntax},
		{"${HOST-x}", "${HOST-x}", envexpand.ErrSyntax},
		{"${HOST:?x}", "${HOST:?x}", envexpand.ErrSyntax},
		{"${A B}", "${A B}", envexpand.ErrSyntax},
	} {
		_, err := envexpand.String(tc.in, testEnv)
		if !errors.Is(err, tc.is) || !strings.Contains(err.Error(), tc.contains) {
			t.Errorf("String(%q): %v; want %v naming %q", tc.in, err, tc.is, tc.contains)
		}
	}
}

// Every string of a document is expanded, keys too; a plain scalar that becomes a
// number, boolean or null is one, a quoted one stays a string; values never add
// structure; errors name the line.
func TestYAML(t *testing.T) {
	src := "app: http://${HOST}:${PORT}/call\n" +
		"count: ${N}\n" +
		"quoted: \"${N}\"\n" +
		"single: '${N}'\n" +
		"flag: ${FLAG:-true}\n" +
		"structure: ${COLON}\n" +
		"comment: ${HASH}\n" +
		"list: [\"${HOST}\", x]\n" +
		"${HOST}_key: v\n" +
		"block: |\n  on ${HOST}\n" +
		"tagged: !!str ${N}\n"
	f, err := parser.ParseBytes([]byte(src), 0)
	if err != nil {
		t.Fatal(err)
	}
	body, err := envexpand.YAML(f.Docs[0], testEnv)
	if err != nil || body != f.Docs[0] {
		t.Fatalf("YAML: %v", err)
	}
	var got map[string]any
	if err := yaml.NodeToValue(f.Docs[0].Body, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"app": "http://ci:8080/call", "count": uint64(3), "quoted": "3", "single": "3", "flag": true,
		"structure": "a: b", "comment": "1 # no", "list": []any{"ci", "x"}, "ci_key": "v", "block": "on ci\n", "tagged": "3"}
	for k, w := range want {
		if g := got[k]; yamlString(t, g) != yamlString(t, w) {
			t.Errorf("%s = %#v, want %#v", k, g, w)
		}
	}
	f, _ = parser.ParseBytes([]byte("a: 1\nb:\n  - ok\n  - ${NOPE}\n"), 0)
	_, err = envexpand.YAML(f.Docs[0], testEnv)
	var e *envexpand.Error
	if !errors.As(err, &e) || e.Line != 4 || !errors.Is(err, envexpand.ErrUnset) || !strings.HasPrefix(err.Error(), "line 4: ${NOPE}: NOPE is not set") {
		t.Fatalf("error %v", err)
	}
	// A retyped scalar keeps its line: a later error still points at it.
	f, _ = parser.ParseBytes([]byte("a: x\nn: ${N}\n"), 0)
	_, _ = envexpand.YAML(f.Docs[0], testEnv)
	var v struct {
		A string `yaml:"a"`
		N []int  `yaml:"n"`
	}
	if err := yaml.NodeToValue(f.Docs[0].Body, &v); err == nil || !strings.Contains(err.Error(), "[2:") {
		t.Fatalf("decode error %v: want it at line 2", err)
	}
}

func yamlString(t *testing.T, v any) string {
	t.Helper()
	b, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// escape writes s so that String reads it back unchanged.
func escape(s string) string { return strings.ReplaceAll(s, "${", "$${") }

// FuzzString: any text expands or is refused with ErrSyntax or ErrUnset, never a
// panic; text without "${" is unchanged; escaped text reads back as itself; every
// reference to a set variable is replaced.
func FuzzString(f *testing.F) {
	testkit.AddSeeds[string](f, "http://${HOST}:${PORT:-3000}/call", "$${X}", "${", "${A:-}", "$$${HOST}", "${HOST}${HOST", "}${N}{")
	f.Fuzz(func(t *testing.T, s string) {
		got, err := envexpand.String(s, testEnv)
		if err != nil {
			if !errors.Is(err, envexpand.ErrSyntax) && !errors.Is(err, envexpand.ErrUnset) {
				t.Fatalf("String(%q): %v wraps neither error", s, err)
			}
		} else if !strings.Contains(s, "${") && got != s {
			t.Fatalf("String(%q) = %q: text without references changed", s, got)
		}
		if back, err := envexpand.String(escape(s), testEnv); err != nil || back != s {
			t.Fatalf("String(escape(%q)) = %q, %v", s, back, err)
		}
		all := func(string) (string, bool) { return "v", true }
		if got, err := envexpand.String(s, all); err == nil && strings.Contains(got, "${") && !strings.Contains(s, "$${") {
			t.Fatalf("String(%q) = %q kept a reference", s, got)
		}
	})
}
