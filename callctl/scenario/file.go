package scenario

import (
	"errors"
	"fmt"
	"regexp"
	"slices"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"github.com/switchboard-voice/switchboard/internal/envexpand"
)

// FileOptions say how ParseFile reads a file.
type FileOptions struct {
	// LookupEnv, when set, resolves ${VAR} and ${VAR:-default} in every string of
	// the file (package envexpand) before anything else is read. Nil leaves them as
	// written: a file that comes from elsewhere (a node's API) never reads the
	// process's environment.
	LookupEnv func(name string) (string, bool)
}

// File is a scenario file of `switchboard test`: one scenario, or several cases that
// share the file's setup.
type File struct {
	// Cases are the file's scenarios in file order: one, unnamed, for a file
	// without cases:.
	Cases []Case
}

// Case is one scenario of a File.
type Case struct {
	// Name is the case's name (cases[].name); empty for a file without cases:.
	Name string
	// Line is the line of the case's entry in cases:, 0 for a file without cases:.
	Line int
	// Skip, when set, is why the case is not run (skip:, the case's or the
	// file's).
	Skip string
	// Snapshot says what a snapshot of the case's call records beyond the verbs,
	// hooks and warnings (snapshot:, the case's laid over the file's).
	Snapshot SnapshotSpec
	Scenario *Scenario
}

// SnapshotSpec is a scenario's snapshot: section: which fields of the requests the
// application received a snapshot records, and which of them it masks besides those
// volatile by rule (sids, ids, timestamps).
type SnapshotSpec struct {
	// Payload are paths (ParsePath) into each request's payload to record; "*"
	// records every field.
	Payload []string `yaml:"payload"`
	// Mask are paths whose values are recorded as masked.
	Mask []string `yaml:"mask"`
}

// RecordsAllFields reports whether the spec records every payload field.
func (s SnapshotSpec) RecordsAllFields() bool { return slices.Contains(s.Payload, "*") }

// validCaseName is what a case's name may be: it is printed, selected with --run
// and joined to the file's name with a slash.
var validCaseName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$`)

// The keys of a file (and of its cases) that are not a Scenario's.
const (
	keyCases    = "cases"
	keyName     = "name"
	keySkip     = "skip"
	keySnapshot = "snapshot"
)

// ParseFile reads a scenario file of `switchboard test`: the keys of a scenario (as
// Parse reads them), plus
//
//   - skip: "reason", at the top or in a case: the scenario is listed, not run;
//   - snapshot: {payload: [paths], mask: [paths]}, what a snapshot records;
//   - cases: a list of scenarios, each with a name, sharing the file's keys: each
//     case's keys are laid over the file's, a mapping (caller, expect, network ...)
//     key by key, any other value (a list, a string) replacing the file's.
//
// Every error is an *Error naming the line at fault.
func ParseFile(src []byte, opts FileOptions) (*File, error) {
	root, err := parseRoot(src, opts)
	if err != nil {
		return nil, err
	}
	base := &ast.MappingNode{BaseNode: &ast.BaseNode{}}
	if root != nil {
		base = root
	}
	casesNode, base := take(base, keyCases)
	if casesNode == nil {
		c, err := readCase(base)
		if err != nil {
			return nil, err
		}
		return &File{Cases: []Case{c}}, nil
	}
	seq, ok := unwrap(casesNode.Value).(*ast.SequenceNode)
	if !ok || len(seq.Values) == 0 {
		return nil, &Error{Line: lineOfToken(casesNode.Value), Msg: "cases: want a list of cases, each with a name"}
	}
	f := &File{}
	names := map[string]int{}
	for i, n := range seq.Values {
		m, ok := unwrap(n).(*ast.MappingNode)
		line := lineOfToken(n)
		if !ok {
			return nil, &Error{Line: line, Msg: fmt.Sprintf("cases[%d]: want a mapping with a name and the scenario's keys", i)}
		}
		nameNode, rest := take(m, keyName)
		name, err := stringValue(nameNode, fmt.Sprintf("cases[%d].name", i))
		if err != nil {
			return nil, err
		}
		switch {
		case name == "":
			return nil, &Error{Line: line, Msg: fmt.Sprintf("cases[%d]: give the case a name (name: presses-1)", i)}
		case !validCaseName.MatchString(name):
			return nil, &Error{Line: lineOfToken(nameNode.Value), Msg: fmt.Sprintf("cases[%d].name: %q: use letters, digits, '.', '_' and '-' (at most 100, starting with a letter or digit)", i, name)}
		}
		if first, dup := names[name]; dup {
			return nil, &Error{Line: lineOfToken(nameNode.Value), Msg: fmt.Sprintf("cases[%d].name: %q is also the name of cases[%d]", i, name, first)}
		}
		names[name] = i
		c, err := readCase(overlay(base, rest))
		if err != nil {
			return nil, err
		}
		c.Name, c.Line = name, line
		f.Cases = append(f.Cases, c)
	}
	return f, nil
}

// parseRoot parses src, expands its references, and returns its top-level mapping
// (nil for an empty file).
func parseRoot(src []byte, opts FileOptions) (root *ast.MappingNode, err error) {
	defer func() {
		// goccy/go-yaml panics on some malformed input (see strictYAML).
		if r := recover(); r != nil {
			root, err = nil, &Error{Msg: fmt.Sprintf("the YAML parser could not read this file (%v)", r)}
		}
	}()
	f, err := parser.ParseBytes(src, 0)
	if err != nil {
		return nil, yamlError(err)
	}
	if len(f.Docs) == 0 || f.Docs[0].Body == nil {
		return nil, nil
	}
	if len(f.Docs) > 1 {
		return nil, &Error{Line: lineOfToken(f.Docs[1]), Msg: "one scenario file holds one YAML document (use cases: for several scenarios)"}
	}
	if opts.LookupEnv != nil {
		if _, err := envexpand.YAML(f.Docs[0], opts.LookupEnv); err != nil {
			var ee *envexpand.Error
			if errors.As(err, &ee) {
				return nil, &Error{Line: ee.Line, Msg: ee.Err.Error()}
			}
			return nil, &Error{Msg: err.Error()}
		}
	}
	m, ok := unwrap(f.Docs[0].Body).(*ast.MappingNode)
	if !ok {
		return nil, &Error{Line: lineOfToken(f.Docs[0].Body), Msg: "a scenario is a mapping of keys (app:, caller:, expect: ...)"}
	}
	return m, nil
}

// readCase decodes one scenario's mapping: its skip and snapshot keys, and the
// Scenario of the others.
func readCase(m *ast.MappingNode) (Case, error) {
	var c Case
	skipNode, m := take(m, keySkip)
	snapNode, m := take(m, keySnapshot)
	var err error
	if c.Skip, err = stringValue(skipNode, keySkip); err != nil {
		return c, err
	}
	if skipNode != nil && c.Skip == "" {
		return c, &Error{Line: lineOfToken(skipNode.Value), Msg: `skip: give the reason as text (skip: "the queue service is down")`}
	}
	if snapNode != nil {
		if err := decodeNode(snapNode.Value, &c.Snapshot); err != nil {
			return c, err
		}
		if err := c.Snapshot.check(); err != nil {
			return c, &Error{Line: lineOfToken(snapNode.Value), Msg: "snapshot." + err.Error()}
		}
	}
	var s Scenario
	if err := decodeNode(m, &s); err != nil {
		return c, err
	}
	if errs := s.check(); len(errs) > 0 {
		return c, checkError(errs, func(path string) int { return lineOfNode(m, path) })
	}
	c.Scenario = &s
	return c, nil
}

func (s SnapshotSpec) check() error {
	for _, list := range []struct {
		key   string
		paths []string
	}{{"payload", s.Payload}, {"mask", s.Mask}} {
		for i, p := range list.paths {
			if p == "*" && list.key == "payload" {
				continue
			}
			if _, err := ParsePath(p); err != nil {
				return fmt.Errorf("%s[%d]: %w", list.key, i, err)
			}
		}
	}
	return nil
}

// decodeNode decodes n into v as Parse decodes a file: unknown keys are errors,
// every error an *Error with its line.
func decodeNode(n ast.Node, v any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &Error{Line: lineOfToken(n), Msg: fmt.Sprintf("the YAML parser could not read this (%v)", r)}
		}
	}()
	if err := yaml.NodeToValue(n, v, yaml.Strict(), yaml.DisallowUnknownField()); err != nil {
		return yamlError(err)
	}
	return nil
}

// yamlError is err as an *Error, located when the YAML library knows where.
func yamlError(err error) error {
	var se *Error
	if errors.As(err, &se) {
		return se
	}
	var ye yaml.Error
	if errors.As(err, &ye) && ye.GetToken() != nil {
		return &Error{Line: ye.GetToken().Position.Line, Msg: yaml.FormatError(err, false, true)}
	}
	return &Error{Msg: err.Error()}
}

// take splits m into the entry of key (nil when absent) and a mapping of the others.
func take(m *ast.MappingNode, key string) (*ast.MappingValueNode, *ast.MappingNode) {
	rest := &ast.MappingNode{BaseNode: m.BaseNode, Start: m.Start, End: m.End, IsFlowStyle: m.IsFlowStyle}
	var found *ast.MappingValueNode
	for _, v := range m.Values {
		if keyOf(v) == key && found == nil {
			found = v
			continue
		}
		rest.Values = append(rest.Values, v)
	}
	return found, rest
}

// overlay returns base with over's entries laid over it: where both map a key to a
// mapping the two are overlaid the same way, otherwise over's entry replaces base's.
// Neither is changed.
func overlay(base, over *ast.MappingNode) *ast.MappingNode {
	out := &ast.MappingNode{BaseNode: over.BaseNode, Start: over.Start, End: over.End}
	at := map[string]int{}
	for _, v := range base.Values {
		at[keyOf(v)] = len(out.Values)
		out.Values = append(out.Values, v)
	}
	for _, v := range over.Values {
		i, ok := at[keyOf(v)]
		if !ok {
			at[keyOf(v)] = len(out.Values)
			out.Values = append(out.Values, v)
			continue
		}
		bm, bok := unwrap(out.Values[i].Value).(*ast.MappingNode)
		om, ook := unwrap(v.Value).(*ast.MappingNode)
		if !bok || !ook {
			out.Values[i] = v
			continue
		}
		merged := *v
		merged.Value = overlay(bm, om)
		out.Values[i] = &merged
	}
	return out
}

// unwrap is the value under an anchor or a tag.
func unwrap(n ast.Node) ast.Node {
	for {
		switch x := n.(type) {
		case *ast.AnchorNode:
			n = x.Value
		case *ast.TagNode:
			n = x.Value
		default:
			return n
		}
	}
}

func keyOf(v *ast.MappingValueNode) string {
	if v.Key == nil {
		return ""
	}
	if s, ok := v.Key.(*ast.StringNode); ok {
		return s.Value
	}
	return v.Key.String()
}

// stringValue is the text of an entry's value ("" for a missing entry), an error
// naming key when it is not text.
func stringValue(v *ast.MappingValueNode, key string) (string, error) {
	if v == nil {
		return "", nil
	}
	switch x := unwrap(v.Value).(type) {
	case *ast.StringNode:
		return x.Value, nil
	case *ast.LiteralNode:
		return x.Value.Value, nil
	case *ast.IntegerNode, *ast.FloatNode:
		return x.String(), nil
	}
	return "", &Error{Line: lineOfToken(v.Value), Msg: key + ": want text"}
}

func lineOfToken(n ast.Node) int {
	if n == nil || n.GetToken() == nil {
		return 0
	}
	return n.GetToken().Position.Line
}

// lineOfNode finds the line of a YAML path under n, 0 when it cannot be found.
func lineOfNode(n ast.Node, path string) int {
	p, err := yaml.PathString(path)
	if err != nil {
		return 0
	}
	found, err := p.FilterNode(n)
	if err != nil || found == nil {
		return 0
	}
	return lineOfToken(found)
}
