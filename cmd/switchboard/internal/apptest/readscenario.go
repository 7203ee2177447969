package apptest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/switchboard-voice/switchboard/callctl/scenario"
)

// ReadOptions say how ReadScenario reads a file.
type ReadOptions struct {
	// Case names the case to read of a file with cases:. It may be left out when
	// the file has one case; it must be, for a file without cases:.
	Case string
	// LookupEnv resolves ${VAR} references, as Config.LookupEnv does.
	LookupEnv func(string) (string, bool)
	// HaveApp says the caller has the application's URL (simulate's APP_URL): a
	// scenario naming none does not need its folder's app:.
	HaveApp bool
}

// ReadScenario reads one scenario of a scenario file as Run reads it
// (docs/testing.md §1): its ${VAR} references resolved, the case asked for of a
// file with cases:, and for a scenario that names no app: its folder's (the app:
// of a switchboard-test.yaml beside it). It is `switchboard simulate --scenario`'s
// reader, so that a file behaves the same under simulate and test. Every error
// names the file, and the line when there is one.
func ReadScenario(file string, o ReadOptions) (scenario.Case, error) {
	src, err := os.ReadFile(file)
	if err != nil {
		return scenario.Case{}, err
	}
	f, err := scenario.ParseFile(src, scenario.FileOptions{LookupEnv: o.LookupEnv})
	if err != nil {
		var se *scenario.Error
		if errors.As(err, &se) {
			return scenario.Case{}, fileError{file: file, line: se.Line, msg: se.Msg}
		}
		return scenario.Case{}, fileError{file: file, msg: err.Error()}
	}
	c, err := pickCase(f, o.Case)
	if err != nil {
		return scenario.Case{}, fileError{file: file, msg: err.Error()}
	}
	if c.Scenario.App == "" && !o.HaveApp {
		fo, err := loadFolder(filepath.Dir(file), Config{LookupEnv: o.LookupEnv})
		if err != nil {
			return scenario.Case{}, err
		}
		c.Scenario.App = fo.cfg.App
	}
	return c, nil
}

// pickCase is the case of f named name: "" picks a file's only scenario.
func pickCase(f *scenario.File, name string) (scenario.Case, error) {
	var names []string
	for _, c := range f.Cases {
		if c.Name == name {
			return c, nil
		}
		names = append(names, c.Name)
	}
	switch {
	case names[0] == "":
		return scenario.Case{}, fmt.Errorf("has no cases: to choose from (leave out --case %s)", name)
	case name == "" && len(names) == 1:
		return f.Cases[0], nil
	case name == "":
		return scenario.Case{}, fmt.Errorf("has %d cases (%s): choose one with --case NAME", len(names), strings.Join(names, ", "))
	}
	return scenario.Case{}, fmt.Errorf("has no case %q: its cases are %s", name, strings.Join(names, ", "))
}
