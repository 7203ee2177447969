package docs

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the import graph of architecture.md from the tree")

const module = "github.com/switchboard-voice/switchboard"

// pkg is a package of the module as `go list` reports it: its path inside the module
// ("." for the root) and the module's packages it imports outside its tests.
type pkg struct {
	Path    string
	Imports []string
}

// listPackages runs `go list` on the module: the packages of the tree, as the go
// command sees them (build constraints and all).
func listPackages(t *testing.T) map[string]pkg {
	t.Helper()
	gocmd := "go"
	if root := os.Getenv("GOROOT"); root != "" {
		gocmd = filepath.Join(root, "bin", "go")
	}
	cmd := exec.Command(gocmd, "list", "-json=ImportPath,Imports", "./...")
	cmd.Dir = ".."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.Bytes())
	}
	pkgs := map[string]pkg{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		local := pkg{Path: inModule(p.ImportPath)}
		for _, imp := range p.Imports {
			if imp == module || strings.HasPrefix(imp, module+"/") {
				local.Imports = append(local.Imports, inModule(imp))
			}
		}
		pkgs[local.Path] = local
	}
	return pkgs
}

func inModule(importPath string) string {
	if importPath == module {
		return "."
	}
	return strings.TrimPrefix(importPath, module+"/")
}

// between returns the text of page between the marker lines <!-- name --> and
// <!-- /name -->, and where it starts and ends.
func between(t *testing.T, page, name string) (string, int, int) {
	t.Helper()
	open, end := "<!-- "+name+" -->\n", "<!-- /"+name+" -->"
	i := strings.Index(page, open)
	j := strings.Index(page, end)
	if i < 0 || j < i {
		t.Fatalf("architecture.md lacks the %s block (%q ... %q)", name, open, end)
	}
	i += len(open)
	return page[i:j], i, j
}

var tableRow = regexp.MustCompile("^\\| `([^`]+)` \\| (\\d+) \\|")

// readTable reads the package table: each package's layer.
func readTable(t *testing.T, page string) map[string]int {
	t.Helper()
	block, _, _ := between(t, page, "package-table")
	layers := map[string]int{}
	for _, line := range strings.Split(block, "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		m := tableRow.FindStringSubmatch(line)
		if m == nil {
			t.Errorf("a table row without `package` and layer: %s", line)
			continue
		}
		if _, dup := layers[m[1]]; dup {
			t.Errorf("package %s has two rows", m[1])
		}
		layers[m[1]], _ = strconv.Atoi(m[2])
	}
	return layers
}

func readPage(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestPackageTableMatchesTheTree: one row per package of `go list ./...`, no more.
func TestPackageTableMatchesTheTree(t *testing.T) {
	pkgs := listPackages(t)
	layers := readTable(t, readPage(t))
	for path := range pkgs {
		if _, ok := layers[path]; !ok {
			t.Errorf("package %s is not in the table of architecture.md", path)
		}
	}
	for path := range layers {
		if _, ok := pkgs[path]; !ok {
			t.Errorf("the table of architecture.md lists %s, which is not a package of the tree", path)
		}
	}
}

// TestImportsPointDownward: every import of the module's packages (tests aside)
// points to a package of a lower layer than its importer's, as the table documents.
func TestImportsPointDownward(t *testing.T) {
	pkgs := listPackages(t)
	layers := readTable(t, readPage(t))
	for _, p := range pkgs {
		from, ok := layers[p.Path]
		if !ok {
			continue // TestPackageTableMatchesTheTree reports it
		}
		for _, imp := range p.Imports {
			if to, ok := layers[imp]; ok && to >= from {
				t.Errorf("%s (layer %d) imports %s (layer %d): imports point to lower layers only", p.Path, from, imp, to)
			}
		}
	}
}

// wingOf is the wing a package belongs to (docs/architecture.md, "Wings"): its
// top-level directory, or "" for the top-level internal/ and for the tests
// (integration, docs), which are no wing.
func wingOf(path string) string {
	top, _, _ := strings.Cut(path, "/")
	switch top {
	case "internal", "integration", "docs", ".":
		return ""
	}
	return top
}

// TestSharedPackagesServeTwoWings: every package under the top-level internal/ is
// imported, by code or tests, by packages of two wings at least; one that a single
// wing uses belongs under that wing's internal/.
func TestSharedPackagesServeTwoWings(t *testing.T) {
	gocmd := "go"
	if root := os.Getenv("GOROOT"); root != "" {
		gocmd = filepath.Join(root, "bin", "go")
	}
	cmd := exec.Command(gocmd, "list", "-json=ImportPath,Imports,TestImports,XTestImports", "./...")
	cmd.Dir = ".."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.Bytes())
	}
	wings := map[string]map[string]bool{} // a package of internal/ → the wings importing it
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p struct {
			ImportPath                         string
			Imports, TestImports, XTestImports []string
		}
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		from := inModule(p.ImportPath)
		if strings.HasPrefix(from, "internal/") && wings[from] == nil {
			wings[from] = map[string]bool{}
		}
		wing := wingOf(from)
		if wing == "" {
			continue
		}
		for _, imp := range slices.Concat(p.Imports, p.TestImports, p.XTestImports) {
			if to := inModule(imp); strings.HasPrefix(to, "internal/") && strings.HasPrefix(imp, module+"/") {
				if wings[to] == nil {
					wings[to] = map[string]bool{}
				}
				wings[to][wing] = true
			}
		}
	}
	if len(wings) == 0 {
		t.Fatal("no package under internal/: the walk read nothing")
	}
	for path, by := range wings {
		if len(by) < 2 {
			t.Errorf("%s is imported by %d wing(s) %v: move it under the internal/ of the wing that uses it", path, len(by), slices.Sorted(maps.Keys(by)))
		}
	}
}

// TestImportGraphIsTheTrees: the graph drawn in architecture.md is the tree's, line
// for line (go test -update redraws it).
func TestImportGraphIsTheTrees(t *testing.T) {
	page := readPage(t)
	want := drawGraph(listPackages(t), readTable(t, page))
	got, i, j := between(t, page, "import-graph")
	if got == want {
		return
	}
	if *update {
		if err := os.WriteFile("architecture.md", []byte(page[:i]+want+page[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("the import graph of architecture.md is not the tree's (go test ./docs -update redraws it); want:\n%s", want)
}

// drawGraph renders one line per package, highest layer first, with the packages of
// the module it imports, wrapped at 100 columns.
func drawGraph(pkgs map[string]pkg, layers map[string]int) string {
	paths := make([]string, 0, len(pkgs))
	width := 0
	for path := range pkgs {
		paths = append(paths, path)
		width = max(width, len(path))
	}
	sort.Slice(paths, func(i, j int) bool {
		if layers[paths[i]] != layers[paths[j]] {
			return layers[paths[i]] > layers[paths[j]]
		}
		return paths[i] < paths[j]
	})
	var b strings.Builder
	b.WriteString("```\n")
	for _, path := range paths {
		imports := slices.Clone(pkgs[path].Imports)
		sort.Slice(imports, func(i, j int) bool {
			if layers[imports[i]] != layers[imports[j]] {
				return layers[imports[i]] > layers[imports[j]]
			}
			return imports[i] < imports[j]
		})
		if len(imports) == 0 {
			imports = []string{"(nothing of the module)"}
		}
		line := fmt.Sprintf("%-*s ─► ", width, path)
		indent := strings.Repeat(" ", width+4)
		for k, imp := range imports {
			item := imp
			if k < len(imports)-1 {
				item += ","
			}
			if k > 0 && len([]rune(line))+1+len(item) > 100 {
				b.WriteString(strings.TrimRight(line, " ") + "\n")
				line = indent
			} else if k > 0 {
				line += " "
			}
			line += item
		}
		b.WriteString(line + "\n")
	}
	b.WriteString("```\n")
	return b.String()
}

// A citation of a page of docs/ and, optionally, its sections: "docs/outbox.md §6",
// "docs/call-control.md §1–2", "docs/call-control.md §1, §2, §4 and §7",
// "docs/outbox.md §2 step 6 and §3".
var (
	citation   = regexp.MustCompile("docs/([A-Za-z][A-Za-z0-9-]*\\.md)`?((?:(?:,? and |, | or | )§[0-9]+[a-z]?(?:–[0-9]+)?(?: (?:step|row) [0-9]+)?)*)")
	section    = regexp.MustCompile("§([0-9]+)([a-z]?)(?:–([0-9]+))?")
	rfcSection = regexp.MustCompile(`RFC [0-9]+ §[0-9.]+`)
	heading    = regexp.MustCompile(`(?m)^## §([0-9]+[a-z]?)\.`)
	// The design files outside the repository that comments used to cite.
	outside = regexp.MustCompile(`CALL-CONTROL\.md|OUTBOX\.md|ARCHITECTURE\.md|STYLE\.md|shared/design`)
	// A line comment and the next one: their text reads as one.
	commentBreak = regexp.MustCompile(`\n[ \t]*// ?`)
)

// TestCitationsNameSectionsThatExist: every docs/PAGE.md §N in the repository's Go
// and Markdown files names a page of docs/ and a section it has; no § stands alone
// (outside docs/ and RFC citations), and nothing cites the design files outside the
// repository.
func TestCitationsNameSectionsThatExist(t *testing.T) {
	sections := map[string]map[string]bool{}
	pages, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, page := range pages {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		sections[page] = map[string]bool{}
		for _, m := range heading.FindAllStringSubmatch(string(b), -1) {
			sections[page][m[1]] = true
		}
	}
	cited := 0
	err = filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != ".." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		ext := filepath.Ext(path)
		if ext != ".go" && ext != ".md" {
			return nil
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel("..", path)
		text := string(raw)
		if ext == ".go" {
			text = commentBreak.ReplaceAllString(text, " ")
		}
		if rel == filepath.Join("docs", "architecture_test.go") {
			return nil // its patterns are not citations
		}
		if m := outside.FindString(text); m != "" {
			t.Errorf("%s cites %s, outside the repository: cite docs/ instead", rel, m)
		}
		for _, m := range citation.FindAllStringSubmatch(text, -1) {
			cited++
			have, ok := sections[m[1]]
			if !ok {
				t.Errorf("%s cites docs/%s, which does not exist", rel, m[1])
				continue
			}
			for _, n := range sectionsOf(m[2]) {
				if !have[n] {
					t.Errorf("%s cites docs/%s §%s, which has no such section", rel, m[1], n)
				}
			}
		}
		if filepath.Dir(rel) == "docs" && ext == ".md" {
			return nil // the pages themselves refer to their own sections
		}
		rest := rfcSection.ReplaceAllString(citation.ReplaceAllString(text, ""), "")
		if i := strings.Index(rest, "§"); i >= 0 {
			t.Errorf("%s has a § that names no page: %q (cite docs/PAGE.md §N)", rel, excerpt(rest, i))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if cited == 0 {
		t.Fatal("no citation found: the walk read nothing")
	}
}

// sectionsOf lists the sections a citation's tail names, ranges expanded: "§1–3, §4b"
// names 1, 2, 3 and 4b.
func sectionsOf(tail string) []string {
	var names []string
	for _, m := range section.FindAllStringSubmatch(tail, -1) {
		if m[3] == "" {
			names = append(names, m[1]+m[2])
			continue
		}
		from, _ := strconv.Atoi(m[1])
		to, _ := strconv.Atoi(m[3])
		for n := from; n <= to; n++ {
			names = append(names, strconv.Itoa(n))
		}
	}
	return names
}

func excerpt(s string, i int) string {
	from, to := max(i-40, 0), min(i+40, len(s))
	return s[from:to]
}
