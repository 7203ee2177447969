package suite

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/switchboard-voice/switchboard/callctl"
	"github.com/switchboard-voice/switchboard/callctl/scenario"
	"github.com/switchboard-voice/switchboard/cmd/switchboard/internal/simulation"
)

// DefaultDir is where `switchboard test` looks without arguments.
const DefaultDir = "scenarios"

// Network gives each scenario's call its options (*featureserver.CallNetwork does).
type Network interface {
	CallOptions(appURL string) callctl.Options
}

// Config is what every scenario's call shares: `switchboard test`'s flags.
type Config struct {
	// App points the scenarios elsewhere (--app): with only a scheme and a host it
	// moves each scenario's app there, keeping its path, retry fragment and
	// transport; with more it replaces every app. "": each scenario's own.
	App                string
	Network            Network
	Secret             string // signs HTTP hooks with Jambonz-Signature
	Username, Password string
	IdleLimit          time.Duration
	RealTime           bool
	// Strict fails a scenario on a compat warning its expect.compat does not name
	// (docs/compatibility.md §2).
	Strict bool
}

// Scenario is one scenario file, read, checked and ready to run.
type Scenario struct {
	Name   string // the file's name without its extension
	File   string
	App    string // after Config.App
	sc     *scenario.Scenario
	opts   callctl.Options
	strict bool // Config.Strict
}

// fileError is a problem of a scenario file, located as compilers do: FILE:LINE: msg.
type fileError struct {
	file string
	line int
	msg  string
}

func (e fileError) Error() string {
	if e.line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.file, e.line, e.msg)
	}
	return fmt.Sprintf("%s: %s", e.file, e.msg)
}

// BadFilesError lists the scenario files that cannot run, each a FILE:LINE: error.
type BadFilesError struct{ Files []error }

func (e *BadFilesError) Error() string {
	return fmt.Sprintf("%d bad scenario file(s), nothing was run:\n%v", len(e.Files), errors.Join(e.Files...))
}

// Load reads and checks every file before anything runs: a suite with a broken file
// runs nothing (a *BadFilesError naming each), so that CI never reports half a suite
// as passing.
func Load(files []string, cfg Config) ([]*Scenario, error) {
	var all []*Scenario
	var errs []error
	names := map[string]string{}
	for _, file := range files {
		ts, err := load(file, cfg.App)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if other, dup := names[ts.Name]; dup {
			errs = append(errs, fileError{file: file, msg: fmt.Sprintf("scenario name %q is also %s's: rename one", ts.Name, other)})
			continue
		}
		names[ts.Name] = file
		ts.strict = cfg.Strict
		ts.opts = callOptions(cfg.Network.CallOptions(ts.App), ts, cfg)
		if err := ts.opts.Validate(); err != nil {
			errs = append(errs, fileError{file: file, msg: strings.ReplaceAll(err.Error(), "\n", "; ")})
			continue
		}
		all = append(all, ts)
	}
	if len(errs) > 0 {
		return nil, &BadFilesError{Files: errs}
	}
	return all, nil
}

// Select is the scenarios whose name matches re (all of them for nil).
func Select(all []*Scenario, re *regexp.Regexp) []*Scenario {
	var run []*Scenario
	for _, ts := range all {
		if re == nil || re.MatchString(ts.Name) {
			run = append(run, ts)
		}
	}
	return run
}

// Files lists the files of args: each directory's *.yaml and *.yml files in
// name order, each file as given; ./scenarios without args.
func Files(args []string) ([]string, error) {
	if len(args) == 0 {
		args = []string{DefaultDir}
	}
	var files []string
	for _, a := range args {
		info, err := os.Stat(a)
		if err != nil {
			if len(args) == 1 && a == DefaultDir && errors.Is(err, os.ErrNotExist) {
				return nil, fmt.Errorf("no ./%s directory: give the scenario directories or files to run", DefaultDir)
			}
			return nil, err
		}
		if !info.IsDir() {
			files = append(files, a)
			continue
		}
		entries, err := os.ReadDir(a)
		if err != nil {
			return nil, err
		}
		n := len(files)
		for _, e := range entries {
			if ext := filepath.Ext(e.Name()); !e.IsDir() && (ext == ".yaml" || ext == ".yml") {
				files = append(files, filepath.Join(a, e.Name()))
			}
		}
		if len(files) == n {
			return nil, fmt.Errorf("%s: no scenario files (*.yaml, *.yml)", a)
		}
	}
	return files, nil
}

// load reads and checks one file, and settles its app under flagApp (Config.App).
func load(file, flagApp string) (*Scenario, error) {
	src, err := os.ReadFile(file)
	if err != nil {
		return nil, fileError{file: file, msg: err.Error()}
	}
	sc, err := scenario.Parse(src)
	if err != nil {
		var se *scenario.Error
		if errors.As(err, &se) {
			return nil, fileError{file: file, line: se.Line, msg: se.Msg}
		}
		return nil, fileError{file: file, msg: err.Error()}
	}
	ts := &Scenario{Name: strings.TrimSuffix(filepath.Base(file), filepath.Ext(file)), File: file, sc: sc}
	if ts.App, err = appUnder(flagApp, sc.App); err != nil {
		return nil, fileError{file: file, line: lineOfKey(src, "app"), msg: err.Error()}
	}
	if ts.App == "" {
		return nil, fileError{file: file, msg: "no app: name the application (app: http://127.0.0.1:3000/call), or give --app"}
	}
	if h := sc.StatusHook; h != "" && !strings.HasPrefix(h, "/") {
		if sc.StatusHook, err = appUnder(flagApp, h); err != nil {
			return nil, fileError{file: file, line: lineOfKey(src, "status_hook"), msg: err.Error()}
		}
	}
	return ts, nil
}

// lineOfKey is the line of a top-level key in src, 0 when it is not found.
func lineOfKey(src []byte, key string) int {
	for i, l := range strings.Split(string(src), "\n") {
		if strings.HasPrefix(l, key+":") {
			return i + 1
		}
	}
	return 0
}

// callOptions are the Options of one scenario's call.
func callOptions(o callctl.Options, ts *Scenario, cfg Config) callctl.Options {
	o.StatusHookURL = ts.sc.StatusHook
	o.Username, o.Password, o.Secret = cfg.Username, cfg.Password, cfg.Secret
	o.Call = callctl.CallInfo{From: ts.sc.From, To: ts.sc.To}
	o.Script = ts.sc.Script()
	o.IdleLimit = cfg.IdleLimit
	o.RealTime = cfg.RealTime
	o.EgressHint = simulation.EgressHint
	return o
}

// appUnder is a scenario's app (or absolute status hook) under --app: flagApp with
// only a scheme and a host moves it there, keeping its path, query, fragment and
// transport (secure when flagApp is https or wss); a flagApp with more replaces it.
// Without --app it is the scenario's own.
func appUnder(flagApp, own string) (string, error) {
	if flagApp == "" {
		return own, nil
	}
	base, err := url.Parse(flagApp)
	if err != nil {
		return "", err
	}
	originOnly := (base.Path == "" || base.Path == "/") && base.RawQuery == "" && base.Fragment == "" && !strings.Contains(flagApp, "#")
	if !originOnly || own == "" {
		return flagApp, nil
	}
	u, err := url.Parse(own)
	if err != nil {
		return "", err
	}
	secure := base.Scheme == "https" || base.Scheme == "wss"
	webSocket := u.Scheme == "ws" || u.Scheme == "wss"
	u.Scheme = map[[2]bool]string{{false, false}: "http", {true, false}: "https", {false, true}: "ws", {true, true}: "wss"}[[2]bool{secure, webSocket}]
	u.Host = base.Host
	return u.String(), nil
}

// Result is what a run of scenarios did.
type Result struct {
	Outcomes []*Outcome // in the order of the files
	Passed   int
	Failed   int
	Skipped  int // not run: the run was interrupted first
	Elapsed  time.Duration
	Started  time.Time
}

// Outcome is one scenario's call and verdict.
type Outcome struct {
	ts       *Scenario
	ran      bool
	result   *callctl.Result
	failures []scenario.Failure
	passed   bool
	elapsed  time.Duration
}

// judge decides whether a scenario passed: every expectation held, and the call did
// not fail unless the scenario expects it. A call that failed with every expectation
// holding fails as the expectation "call".
func judge(ts *Scenario, r *callctl.Result) ([]scenario.Failure, bool) {
	e := ts.sc.Expectations()
	failures := e.Evaluate(r)
	if ts.strict {
		failures = append(failures, e.Strict(r)...)
	}
	if len(failures) > 0 {
		return failures, false
	}
	if r.Failed() && !e.ExpectFailure() {
		at := slices.IndexFunc(r.Timeline, func(x callctl.Event) bool { return x.Kind == callctl.KindAlert })
		if at < 0 {
			at = len(r.Timeline) - 1
		}
		return []scenario.Failure{{Expectation: "call", Event: at, Message: fmt.Sprintf(
			"call: ended %s (%s), SIP %d; a scenario that expects this names its reason or status", r.Status, r.Reason, r.SIPStatus)}}, false
	}
	return nil, true
}
