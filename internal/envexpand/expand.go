package envexpand

import (
	"errors"
	"fmt"
	"strings"
)

// Lookup returns the value of an environment variable, and whether it is set, as
// os.LookupEnv does.
type Lookup func(name string) (string, bool)

// ErrSyntax is wrapped by the errors String returns for a reference it cannot read;
// ErrUnset by those for a variable that is not set and has no default.
var (
	ErrSyntax = errors.New("bad variable reference (write ${NAME} or ${NAME:-default})")
	ErrUnset  = errors.New("variable not set")
)

// String returns s with each reference replaced by its value. An unset variable
// without a default, and a reference that is not ${NAME} or ${NAME:-default} (NAME:
// a letter or _, then letters, digits and _), are errors naming the reference.
func String(s string, lookup Lookup) (string, error) {
	if !strings.Contains(s, "${") {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c != '$':
			b.WriteByte(c)
			i++
		case strings.HasPrefix(s[i:], "$${"):
			b.WriteString("${")
			i += 3
		case strings.HasPrefix(s[i:], "${"):
			end := strings.IndexByte(s[i:], '}')
			if end < 0 {
				return "", fmt.Errorf("%q has no closing }: %w", s[i:], ErrSyntax)
			}
			ref := s[i : i+end+1]
			v, err := resolve(ref, lookup)
			if err != nil {
				return "", err
			}
			b.WriteString(v)
			i += end + 1
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String(), nil
}

// resolve is the value of one reference, ref being "${...}".
func resolve(ref string, lookup Lookup) (string, error) {
	inner := ref[2 : len(ref)-1]
	name, def, hasDefault := strings.Cut(inner, ":-")
	if !validName(name) {
		return "", fmt.Errorf("%s: %w", ref, ErrSyntax)
	}
	v, set := lookup(name)
	switch {
	case hasDefault && v == "":
		return def, nil
	case !set:
		return "", fmt.Errorf("%s: %s is not set (give a default: ${%s:-value}): %w", ref, name, name, ErrUnset)
	}
	return v, nil
}

func validName(name string) bool {
	if name == "" {
		return false
	}
	for i, r := range name {
		letter := r == '_' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z'
		if !letter && (i == 0 || r < '0' || r > '9') {
			return false
		}
	}
	return true
}
