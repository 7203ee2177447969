package apptest

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/switchboard-voice/switchboard/callctl"
	"github.com/switchboard-voice/switchboard/callctl/scenario"
	"github.com/switchboard-voice/switchboard/cmd/switchboard/internal/apptest/snapshot"
)

// FolderConfigName is the file of a folder's settings (FolderConfig); it is not a
// scenario. Snapshot files end in SnapshotSuffix.
const (
	FolderConfigName = "switchboard-test.yaml"
	SnapshotSuffix   = ".snap.yaml"
)

// FolderConfig is a scenario folder's switchboard-test.yaml: what applies to every
// scenario file of the folder. ${VAR} references are read as in scenario files.
type FolderConfig struct {
	// Start is the shell command that starts the application the folder's
	// scenarios run against (as --start does).
	Start string `yaml:"start"`
	// Dir is the working directory of Start, relative to the folder. Default: the
	// folder.
	Dir string `yaml:"dir"`
	// StartTimeout bounds the wait for the application to accept connections.
	// Default: --start-timeout.
	StartTimeout scenario.Duration `yaml:"start_timeout"`
	// Watch are the files and directories (relative to the folder) whose changes
	// restart the application and run the folder's scenarios again under --watch.
	// Default: Dir, when Start is set.
	Watch []string `yaml:"watch"`
	// App is the application of the folder's scenarios that name none.
	App string `yaml:"app"`
	// Reuse leaves Start unused when every address of the folder's scenarios
	// already accepts connections: the app is already running (started by hand, in
	// another terminal). Off, a running app makes Start fail, as its port is taken.
	Reuse bool `yaml:"reuse"`
	// WSHandshakeTimeout is the WebSocket opening handshake timeout of the folder's
	// calls, unless the run was given one (--ws-handshake-timeout or
	// JAMBONES_WS_HANDSHAKE_TIMEOUT_MS, Config.HandshakeTimeoutGiven): a Node app
	// started cold on a busy CI machine can take longer than jambonz's 1.5 s to
	// answer its first handshakes. Default: the run's.
	WSHandshakeTimeout scenario.Duration `yaml:"ws_handshake_timeout"`
}

// folder is a directory of scenario files and its settings.
type folder struct {
	dir        string
	configFile string // "" when the folder has none
	cfg        FolderConfig
}

// testCase is one scenario, read, checked and ready to run: a file's, or one case
// of a file with cases:.
type testCase struct {
	index    int    // in the suite, in file order
	name     string // FILE, or FILE/CASE
	file     string
	line     int // of the case in the file, 0 for a file without cases
	skip     string
	sc       *scenario.Scenario
	snapshot scenario.SnapshotSpec
	app      string // after --app
	opts     callctl.Options
	folder   *folder
	// snapshots is the file's snapshot file (NAME.snap.yaml), shared by its cases.
	snapshots *snapshot.File
}

// suite is what the paths hold: every scenario in file order, and the folders.
type suite struct {
	cases   []*testCase
	folders []*folder
}

// fileError is a problem of a file, located as compilers do: FILE:LINE: msg.
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

// load reads and checks every file of the paths. Every problem is reported at once,
// as a usage error: a suite with a broken file runs nothing, so that CI never
// reports half a suite as passing.
func load(c Config) (*suite, error) {
	files, err := scenarioFiles(c.Paths)
	if err != nil {
		return nil, usagef("%v", err)
	}
	s := &suite{}
	var errs []error
	folders := map[string]*folder{}
	names := map[string]string{}
	for _, file := range files {
		dir := filepath.Dir(file)
		fo, ok := folders[dir]
		if !ok {
			if fo, err = loadFolder(dir, c); err != nil {
				errs = append(errs, err)
			}
			folders[dir] = fo
			if fo != nil {
				s.folders = append(s.folders, fo)
			}
		}
		if fo == nil {
			continue
		}
		cases, err := loadFile(file, fo, c)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, tc := range cases {
			if other, dup := names[tc.name]; dup {
				errs = append(errs, fileError{file: file, line: tc.line, msg: fmt.Sprintf("scenario name %q is also %s's: rename one", tc.name, other)})
				continue
			}
			names[tc.name] = file
			tc.index = len(s.cases)
			s.cases = append(s.cases, tc)
		}
	}
	if len(errs) > 0 {
		return nil, usagef("%d bad scenario file(s), nothing was run:\n%v", len(errs), errors.Join(errs...))
	}
	return s, nil
}

// scenarioFiles lists the files of paths: each directory's *.yaml and *.yml files
// in name order (but its settings and snapshots), each file as given.
func scenarioFiles(paths []string) ([]string, error) {
	var files []string
	for _, p := range paths {
		info, err := os.Stat(p)
		if err != nil {
			if len(paths) == 1 && p == DefaultDir && errors.Is(err, os.ErrNotExist) {
				return nil, fmt.Errorf("no ./%s directory: give the scenario directories or files to run", DefaultDir)
			}
			if errors.Is(err, os.ErrNotExist) {
				return nil, fmt.Errorf("%s: no such scenario file or directory", p)
			}
			return nil, err
		}
		if !info.IsDir() {
			files = append(files, p)
			continue
		}
		entries, err := os.ReadDir(p)
		if err != nil {
			return nil, err
		}
		n := len(files)
		for _, e := range entries {
			if !e.IsDir() && isScenarioFile(e.Name()) {
				files = append(files, filepath.Join(p, e.Name()))
			}
		}
		if len(files) == n {
			return nil, fmt.Errorf("%s: no scenario files (*.yaml, *.yml)", p)
		}
	}
	return files, nil
}

// isScenarioFile reports whether a directory entry's name is a scenario file's.
func isScenarioFile(name string) bool {
	ext := filepath.Ext(name)
	return (ext == ".yaml" || ext == ".yml") && !isFolderConfig(name) && !strings.HasSuffix(name, SnapshotSuffix)
}

func isFolderConfig(name string) bool {
	return name == FolderConfigName || name == strings.TrimSuffix(FolderConfigName, ".yaml")+".yml"
}

// loadFolder reads dir's settings, if it has any.
func loadFolder(dir string, c Config) (*folder, error) {
	fo := &folder{dir: dir}
	for _, name := range []string{FolderConfigName, strings.TrimSuffix(FolderConfigName, ".yaml") + ".yml"} {
		path := filepath.Join(dir, name)
		src, err := os.ReadFile(path)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fileError{file: path, msg: err.Error()}
		}
		if fo.configFile != "" {
			return nil, fileError{file: path, msg: "is beside " + fo.configFile + ": keep one"}
		}
		fo.configFile = path
		if err := decodeFolderConfig(src, c.LookupEnv, &fo.cfg); err != nil {
			var se *scenario.Error
			if errors.As(err, &se) {
				return nil, fileError{file: path, line: se.Line, msg: se.Msg}
			}
			return nil, fileError{file: path, msg: err.Error()}
		}
	}
	return fo, nil
}

// loadFile reads one scenario file: its scenario, or each of its cases.
func loadFile(file string, fo *folder, c Config) ([]*testCase, error) {
	src, err := os.ReadFile(file)
	if err != nil {
		return nil, fileError{file: file, msg: err.Error()}
	}
	f, err := scenario.ParseFile(src, scenario.FileOptions{LookupEnv: c.LookupEnv})
	if err != nil {
		var se *scenario.Error
		if errors.As(err, &se) {
			return nil, fileError{file: file, line: se.Line, msg: se.Msg}
		}
		return nil, fileError{file: file, msg: err.Error()}
	}
	base := strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	snaps, err := snapshot.Read(snapshotPath(file))
	if err != nil {
		return nil, err
	}
	var cases []*testCase
	for _, fc := range f.Cases {
		tc := &testCase{name: base, file: file, line: fc.Line, skip: fc.Skip, sc: fc.Scenario, snapshot: fc.Snapshot, folder: fo, snapshots: snaps}
		if fc.Name != "" {
			tc.name = base + "/" + fc.Name
		}
		at := func(msg string) error {
			if fc.Name != "" {
				msg = "case " + fc.Name + ": " + msg
			}
			return fileError{file: file, line: tc.line, msg: msg}
		}
		own := tc.sc.App
		if own == "" {
			own = fo.cfg.App
		}
		if tc.app, err = appUnder(c.App, own); err != nil {
			return nil, at(err.Error())
		}
		if tc.app == "" {
			return nil, at("no app: name the application (app: http://127.0.0.1:3000/call), or give --app")
		}
		if h := tc.sc.StatusHook; h != "" && !strings.HasPrefix(h, "/") {
			if tc.sc.StatusHook, err = appUnder(c.App, h); err != nil {
				return nil, at(err.Error())
			}
		}
		tc.opts = callOptions(c.CallOptions(tc.app), tc.sc)
		if d := fo.cfg.WSHandshakeTimeout; d > 0 && !c.HandshakeTimeoutGiven {
			tc.opts.WebSocket.HandshakeTimeout = time.Duration(d)
		}
		if err := tc.opts.Validate(); err != nil {
			return nil, at(strings.ReplaceAll(err.Error(), "\n", "; "))
		}
		cases = append(cases, tc)
	}
	return cases, nil
}

// snapshotPath is the snapshot file of a scenario file: beside it, its extension
// replaced (NAME.yaml and NAME.yml: NAME.snap.yaml).
func snapshotPath(file string) string {
	return strings.TrimSuffix(file, filepath.Ext(file)) + SnapshotSuffix
}

// callOptions are the Options of a scenario's calls: base, for its app, with what
// the scenario says.
func callOptions(o callctl.Options, sc *scenario.Scenario) callctl.Options {
	o.StatusHookURL = sc.StatusHook
	o.QueueEventHookURL = sc.QueueEventHook
	o.Call = callctl.CallInfo{From: sc.From, To: sc.To, EnvVars: sc.EnvVars}
	o.Script = sc.Script()
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

// selected are the cases whose name matches run (all when run is nil).
func (s *suite) selected(run *regexp.Regexp) []*testCase {
	var out []*testCase
	for _, tc := range s.cases {
		if run == nil || run.MatchString(tc.name) {
			out = append(out, tc)
		}
	}
	return out
}

// startTimeout is how long the folder's application may take to accept
// connections.
func (fo *folder) startTimeout(def time.Duration) time.Duration {
	if fo.cfg.StartTimeout > 0 {
		return time.Duration(fo.cfg.StartTimeout)
	}
	return def
}
