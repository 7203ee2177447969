package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The pages whose shell blocks show switchboard commands: the README, the
// reference pages of docs/, the testing guide and the examples' READMEs.
var commandPages = []string{"README.md", "docs/cli.md", "docs/operators.md", "docs/rest-api.md", "docs/testing.md", "examples/voice-agent/README.md"}

var shellBlock = regexp.MustCompile("(?ms)^```(?:sh|bash|shell)\n(.*?)^```")

// shellWords splits a line as the shell would into words and operators (| & ; && ||
// $( ) > <), quotes removed; a # starting a word begins a comment. $VAR stays as
// written: a command's words, not its values, are what the test checks.
func shellWords(line string) []string {
	var words []string
	var cur strings.Builder
	inWord := false
	flush := func() {
		if inWord {
			words = append(words, cur.String())
			cur.Reset()
			inWord = false
		}
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '\'':
			j := strings.IndexByte(line[i+1:], '\'')
			if j < 0 {
				j = len(line) - i - 1
			}
			cur.WriteString(line[i+1 : i+1+j])
			inWord, i = true, i+1+j
		case c == '"':
			j := i + 1
			for ; j < len(line) && line[j] != '"'; j++ {
				if line[j] == '\\' && j+1 < len(line) {
					j++
				}
				cur.WriteByte(line[j])
			}
			inWord, i = true, j
		case c == '#' && !inWord:
			flush()
			return words
		case c == ' ' || c == '\t':
			flush()
		case strings.IndexByte("|&;()<>", c) >= 0:
			flush()
			op := string(c)
			if c == '$' {
				op = "$("
			}
			if i+1 < len(line) && (line[i:i+2] == "&&" || line[i:i+2] == "||") {
				op, i = line[i:i+2], i+1
			}
			words = append(words, op)
		case c == '$' && i+1 < len(line) && line[i+1] == '(':
			flush()
			words, i = append(words, "$("), i+1
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	flush()
	return words
}

// switchboardCommands are the argument lists of every switchboard command in the
// shell blocks of page: lines joined at their trailing backslash, each simple
// command cut at the shell's operators, its leading VAR=value assignments dropped,
// its redirections left out.
func switchboardCommands(page string) [][]string {
	var out [][]string
	for _, block := range shellBlock.FindAllStringSubmatch(page, -1) {
		text := strings.ReplaceAll(block[1], "\\\n", " ")
		for _, line := range strings.Split(text, "\n") {
			var cmd []string
			flushCmd := func() {
				for len(cmd) > 0 && strings.Contains(cmd[0], "=") && !strings.HasPrefix(cmd[0], "-") {
					cmd = cmd[1:] // VAR=value before the command
				}
				switch {
				case len(cmd) > 0 && cmd[0] == "switchboard":
					out = append(out, cmd[1:])
				case len(cmd) > 2 && cmd[0] == "go" && cmd[1] == "run" && cmd[2] == "./cmd/switchboard":
					out = append(out, cmd[3:]) // the README's first command
				}
				cmd = nil
			}
			words := shellWords(line)
			for i := 0; i < len(words); i++ {
				switch w := words[i]; w {
				case "|", "&", ";", "&&", "||", "$(", ")", "(":
					flushCmd()
				case ">", "<":
					i++ // and its file
				default:
					cmd = append(cmd, w)
				}
			}
			flushCmd()
		}
	}
	return out
}

// Every switchboard command the README and the reference pages show parses: its
// (sub)command exists, its flags exist with values of their type, and it has the
// arguments it takes, as `switchboard ... --help` would find it. A command the
// binary does not have, or a flag renamed, fails here before a reader hits it.
func TestDocumentedCommandsParse(t *testing.T) {
	found := 0
	for _, name := range commandPages {
		raw, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(name)))
		if err != nil {
			t.Fatal(err)
		}
		for _, args := range switchboardCommands(string(raw)) {
			found++
			root := newRootCmd(&cli{getenv: func(string) string { return "" }})
			root.InitDefaultVersionFlag() // cobra adds --version and --help as it executes
			cmd, rest, err := root.Find(args)
			if err != nil {
				t.Errorf("%s: switchboard %s: %v", name, strings.Join(args, " "), err)
				continue
			}
			cmd.InitDefaultHelpFlag()
			if err := cmd.ParseFlags(rest); err != nil {
				t.Errorf("%s: switchboard %s: %v", name, strings.Join(args, " "), err)
				continue
			}
			if help, _ := cmd.Flags().GetBool("help"); help {
				continue
			}
			if err := cmd.ValidateArgs(cmd.Flags().Args()); err != nil {
				t.Errorf("%s: switchboard %s: %v", name, strings.Join(args, " "), err)
			}
		}
	}
	if found < 20 {
		t.Fatalf("%d switchboard commands found in %v: the test reads too little", found, commandPages)
	}
}

// The shell's words as the test reads them.
func TestShellWords(t *testing.T) {
	got := switchboardCommands("```sh\n" +
		"SWITCHBOARD_X=1 switchboard serve --listen 127.0.0.1:8080 &   # a comment\n" +
		"EP=$(switchboard webhooks list | awk 'NR==2 {print $1}')\n" +
		"printf '%s' \"$BODY\" | switchboard verify --secret \"$S\" \\\n  -H \"webhook-id: $ID\" > out.txt\n" +
		"curl -s localhost:8080/healthz\n" +
		"go run ./cmd/switchboard demo   # the first command\n" +
		"```\n")
	want := [][]string{
		{"serve", "--listen", "127.0.0.1:8080"},
		{"webhooks", "list"},
		{"verify", "--secret", "$S", "-H", "webhook-id: $ID"},
		{"demo"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	for i := range want {
		if strings.Join(got[i], "\x00") != strings.Join(want[i], "\x00") {
			t.Errorf("command %d: %q, want %q", i, got[i], want[i])
		}
	}
}

// The operators' reference lists every setting of serve, its variable beside its
// flag, so that a setting added to the node is documented where operators look.
func TestOperatorsReferenceListsEverySetting(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "docs", "operators.md"))
	if err != nil {
		t.Fatal(err)
	}
	page := string(raw)
	for _, f := range append(serveFlags, envFlag{name: "log-level", env: "SWITCHBOARD_LOG_LEVEL"}) {
		row := "| `" + f.env + "` | `--" + f.name + "`"
		if !strings.Contains(page, row) {
			t.Errorf("docs/operators.md has no row %q...", row)
		}
	}
}

// The README's front door: its first shell block gives the two commands a newcomer
// with only Go needs, `go run ./cmd/switchboard demo` then `go test ./...`, before
// any install step or bare switchboard.
func TestReadmeStartsWithTheTwoCommands(t *testing.T) {
	page, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	first := shellBlock.FindStringSubmatch(string(page))
	if first == nil {
		t.Fatal("the README has no shell block")
	}
	var cmds []string
	for _, line := range strings.Split(first[1], "\n") {
		if cmd, _, _ := strings.Cut(line, "#"); strings.TrimSpace(cmd) != "" {
			cmds = append(cmds, strings.Join(strings.Fields(cmd), " "))
		}
	}
	if want := []string{"go run ./cmd/switchboard demo", "go test ./..."}; strings.Join(cmds, "\n") != strings.Join(want, "\n") {
		t.Errorf("the README's first commands are %q, want %q", cmds, want)
	}
}
