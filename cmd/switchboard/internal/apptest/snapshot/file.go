package snapshot

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	udiff "github.com/aymanbagabas/go-udiff"
	"github.com/goccy/go-yaml"
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

// Diff is a unified diff from want (the snapshot) to got (this call), "" when they
// are the same.
func Diff(want, got Call) string {
	a, b := Text(want), Text(got)
	if a == b {
		return ""
	}
	return udiff.Unified("snapshot", "this call", a, b)
}

// File is a scenario file's snapshot file: each of its scenarios' Call by name (the
// file's name, or its cases' names).
type File struct {
	Path    string
	Entries map[string]Call
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
	return f, nil
}

// Exists reports whether the file is on disk (Read found it, or Write wrote it).
func (f *File) Exists() bool {
	_, err := os.Stat(f.Path)
	return err == nil
}

// Write writes the entries of names, in that order (the scenario file's), dropping
// the others: those of cases the scenario file no longer has. source names the
// scenario file in the header.
func (f *File) Write(source string, names []string) error {
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
			return err
		}
		fmt.Fprintf(&b, "%s:\n", bytes.TrimSpace(key))
		for _, line := range bytes.SplitAfter([]byte(Text(c)), []byte("\n")) {
			if len(line) > 0 {
				b.WriteString("  ")
				b.Write(line)
			}
		}
	}
	return os.WriteFile(f.Path, b.Bytes(), 0o644)
}
