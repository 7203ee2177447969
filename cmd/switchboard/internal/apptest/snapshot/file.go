package snapshot

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	udiff "github.com/aymanbagabas/go-udiff"
	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

// Text is c as a snapshot file writes it, and as two snapshots are compared: block
// YAML, one value per line, payload fields in name order.
func Text(c Call) string {
	c.Requests = slices.Clone(c.Requests)
	for i, q := range c.Requests {
		if q.Payload != nil {
			// Numbers compare alike whether a call sent them or a file holds them.
			c.Requests[i].Payload, _ = jsonValue(q.Payload).(map[string]any)
		}
	}
	b, err := yaml.MarshalWithOptions(c, yaml.Indent(2), yaml.IndentSequence(true))
	if err != nil { // a Call of JSON values always marshals
		panic(err)
	}
	return string(b)
}

// DiffIn is a unified diff from the entry name of f (the snapshot) to got (this
// call), "" when they are the same, read as the file holds it: labelled with f's path, each hunk numbered with the lines
// of the file (when f was read from one, as Write writes them) and headed with the
// part of the call it is in (verbs:, requests[2] hook: /gather), as git heads a
// hunk with its function.
func (f *File) DiffIn(name string, got Call) string {
	want := f.Entries[name]
	a, b := Text(want), Text(got)
	if a == b {
		return ""
	}
	d := udiff.Unified(f.Path, "this call", a, b)
	offset := f.lines[name] // the entry's key line: its text starts on the next one
	oldLines := strings.Split(a, "\n")
	var out strings.Builder
	lines := strings.SplitAfter(d, "\n")
	for i, l := range lines {
		m := hunkHeader.FindStringSubmatch(l)
		if m == nil {
			out.WriteString(l)
			continue
		}
		from, _ := strconv.Atoi(m[1])
		to, _ := strconv.Atoi(m[3])
		fmt.Fprintf(&out, "@@ -%d%s +%d%s @@", from+offset, m[2], to+offset, m[4])
		// The part of the call the first changed line is in, after the context.
		changed := from - 1
		for _, body := range lines[i+1:] {
			if !strings.HasPrefix(body, " ") {
				break
			}
			changed++
		}
		if where := section(oldLines, changed); where != "" {
			out.WriteString(" " + where)
		}
		out.WriteString("\n")
	}
	return out.String()
}

var hunkHeader = regexp.MustCompile(`^@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@`)

// section names the part of a snapshot's text (Text's lines) line i is in: its
// top-level key, or within requests: the request, by index and first line.
func section(lines []string, i int) string {
	key, req, reqLine := "", -1, ""
	for _, l := range lines[:min(i+1, len(lines))] {
		switch {
		case l != "" && l[0] != ' ' && l[0] != '-':
			key, req = strings.TrimSuffix(strings.Fields(l)[0], ":"), -1
		case key == "requests" && strings.HasPrefix(l, "  - "):
			req, reqLine = req+1, strings.TrimPrefix(l, "  - ")
		}
	}
	switch {
	case key == "requests" && req >= 0:
		return fmt.Sprintf("requests[%d] %s", req, reqLine)
	case key != "":
		return key + ":"
	}
	return ""
}

// File is a scenario file's snapshot file: each of its scenarios' Call by name (the
// file's name, or its cases' names).
type File struct {
	Path    string
	Entries map[string]Call
	lines   map[string]int // the line of each entry's key, when read from a file
}

// Error is a problem of a snapshot file, at a line (0 when unknown).
type Error struct {
	Path string
	Line int
	Msg  string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.Path, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.Path, e.Msg)
}

// Read reads the snapshot file at path; a file that does not exist is an empty
// File. Unknown keys are errors, each an *Error.
func Read(path string) (f *File, err error) {
	f = &File{Path: path, Entries: map[string]Call{}}
	src, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return f, nil
	}
	if err != nil {
		return nil, &Error{Path: path, Msg: err.Error()}
	}
	defer func() {
		// goccy/go-yaml panics on some malformed input (see scenario.Parse).
		if r := recover(); r != nil {
			f, err = nil, &Error{Path: path, Msg: fmt.Sprintf("the YAML parser could not read this file (%v)", r)}
		}
	}()
	if err := yaml.UnmarshalWithOptions(src, &f.Entries, yaml.Strict(), yaml.DisallowUnknownField()); err != nil {
		var ye yaml.Error
		if errors.As(err, &ye) && ye.GetToken() != nil {
			return nil, &Error{Path: path, Line: ye.GetToken().Position.Line, Msg: yaml.FormatError(err, false, true)}
		}
		return nil, &Error{Path: path, Msg: err.Error()}
	}
	if f.Entries == nil {
		f.Entries = map[string]Call{}
	}
	f.lines = entryLines(src)
	return f, nil
}

// entryLines are the lines of a snapshot file's top-level keys, by key.
func entryLines(src []byte) map[string]int {
	lines := map[string]int{}
	file, err := parser.ParseBytes(src, 0)
	if err != nil || len(file.Docs) == 0 {
		return lines
	}
	m, ok := file.Docs[0].Body.(*ast.MappingNode)
	if !ok {
		return lines
	}
	for _, v := range m.Values {
		if k, ok := v.Key.(*ast.StringNode); ok && k.GetToken() != nil {
			lines[k.Value] = k.GetToken().Position.Line
		}
	}
	return lines
}

// Exists reports whether the file is on disk (Read found it, or Write wrote it).
func (f *File) Exists() bool {
	_, err := os.Stat(f.Path)
	return err == nil
}

// Write writes the entries of names, in that order (the scenario file's), dropping
// the others: those of cases the scenario file no longer has. source names the
// scenario file in the header. A file that would not change is left as it is:
// written reports whether it changed.
func (f *File) Write(source string, names []string) (written bool, err error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Snapshots of %s, written by `switchboard test --update`: what each scenario's\n", filepath.Base(source))
	b.WriteString("# call did. A change to this file is a change of the app's behaviour: review it.\n")
	for _, name := range names {
		c, ok := f.Entries[name]
		if !ok {
			continue
		}
		key, err := yaml.Marshal(name)
		if err != nil {
			return false, err
		}
		fmt.Fprintf(&b, "%s:\n", bytes.TrimSpace(key))
		for _, line := range bytes.SplitAfter([]byte(Text(c)), []byte("\n")) {
			if len(line) > 0 {
				b.WriteString("  ")
				b.Write(line)
			}
		}
	}
	if old, err := os.ReadFile(f.Path); err == nil && bytes.Equal(old, b.Bytes()) {
		return false, nil
	}
	if err := os.WriteFile(f.Path, b.Bytes(), 0o644); err != nil {
		return false, err
	}
	return true, nil
}
