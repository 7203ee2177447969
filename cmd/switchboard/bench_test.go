package main

import (
	"strings"
	"testing"

	"github.com/switchboard-voice/switchboard/cmd/switchboard/internal/benchkit"
	"github.com/switchboard-voice/switchboard/internal/pgtest"
)

// benchResults decodes a bench's --json output: one object per line, each a
// complete measure (no unknown field), in the order of want.
func benchResults(t *testing.T, stdout string, rounds int, want ...string) []benchkit.Result {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	if len(lines) != len(want) {
		t.Fatalf("--json printed %d lines, want %d (one per measure):\n%s", len(lines), len(want), stdout)
	}
	var out []benchkit.Result
	for i, line := range lines {
		r := decodeJSONLine[benchkit.Result](t, line+"\n", "measure", "ours", "baseline", "ratio", "unit", "better", "rounds", "per_round")
		if r.Measure != want[i] || r.Unit == "" || r.Rounds != rounds || len(r.PerRound) != rounds ||
			r.Better != benchkit.Higher && r.Better != benchkit.Lower {
			t.Errorf("line %d: %+v; want measure %q over %d rounds", i+1, r, want[i], rounds)
		}
		if !(r.Ratio.Min <= r.Ratio.Median && r.Ratio.Median <= r.Ratio.Max) {
			t.Errorf("%s: ratio %+v out of order", r.Measure, r.Ratio)
		}
		for _, pr := range r.PerRound {
			if pr.Baseline != 0 && pr.Ratio != pr.Ours/pr.Baseline {
				t.Errorf("%s: round %+v: ratio is not ours/baseline", r.Measure, pr)
			}
		}
		out = append(out, r)
	}
	return out
}

func runBench(t *testing.T, args ...string) string {
	t.Helper()
	code, stdout, stderr := runCLI(t, nil, append([]string{"bench"}, args...)...)
	if code != exitOK {
		t.Fatalf("bench %v: exit %d, stderr %q", args, code, stderr)
	}
	return stdout
}

// positive fails t unless every round of every result measured both sides.
func positive(t *testing.T, res []benchkit.Result) {
	t.Helper()
	for _, r := range res {
		for _, pr := range r.PerRound {
			if pr.Ours <= 0 || pr.Baseline <= 0 {
				t.Errorf("%s: round %+v: a side measured nothing", r.Measure, pr)
			}
		}
	}
}

func TestBenchHooksAndWS(t *testing.T) {
	positive(t, benchResults(t, runBench(t, "hooks", "--requests", "30", "--rounds", "3", "--json"), 3, "hook round trip"))
	positive(t, benchResults(t, runBench(t, "ws", "--messages", "30", "--size", "64", "--rounds", "2", "--json"), 2, "websocket request/ack"))
	md := runBench(t, "ws", "--messages", "5", "--rounds", "1", "--markdown")
	if !strings.Contains(md, "| measure | unit | better | ours | baseline |") || !strings.Contains(md, "| websocket request/ack | µs | lower |") {
		t.Errorf("--markdown:\n%s", md)
	}
	out := runBench(t, "hooks", "--requests", "5", "--rounds", "1")
	for _, want := range []string{"hooks: 5 requests", "better", "ratio min", "median", "hook round trip", "µs", "lower"} {
		if !strings.Contains(out, want) {
			t.Errorf("text output lacks %q:\n%s", want, out)
		}
	}
}

// TestBenchCalls: 30 calls at 10 a process are held by three client processes, each
// with its app on its own loopback address, all live at once; every call ends with
// the app's hangup (Calls fails otherwise).
func TestBenchCalls(t *testing.T) {
	res := benchResults(t, runBench(t, "calls", "--calls", "30", "--per-process", "10", "--rounds", "2", "--json"), 2,
		"memory per live call", "heap per live call", "stacks per live call", "goroutines per live call", "set up per second")
	positive(t, []benchkit.Result{res[0], res[3], res[4]})
	for _, pr := range res[3].PerRound {
		// A bare socket has its reader; a call has at least that.
		if pr.Baseline < 1 || pr.Ours < 1 {
			t.Errorf("goroutines per live call %+v: want at least 1 a side", pr)
		}
	}
	out := runBench(t, "calls", "--calls", "6", "--per-process", "2", "--rounds", "1")
	if !strings.Contains(out, "6 live at once in 3 client process(es) on 127.0.0.1, 127.0.0.2, 127.0.0.3") {
		t.Errorf("text output does not say how the calls were spread:\n%s", out)
	}
}

// TestBenchOutbox: on SQLite the outbox's rate comes with the schema's pipeline
// floor, against the plain client and as the outbox's share of it, each round.
func TestBenchOutbox(t *testing.T) {
	res := benchResults(t, runBench(t, "outbox", "--deliveries", "60", "--concurrency", "4", "--rounds", "2", "--json"), 2,
		"deliveries per second", "schema's pipeline floor ÷ plain client", "outbox ÷ schema's pipeline floor")
	positive(t, res)
	for i := range 2 {
		if res[1].PerRound[i].Baseline != res[0].PerRound[i].Baseline || res[2].PerRound[i].Ours != res[0].PerRound[i].Ours ||
			res[2].PerRound[i].Baseline != res[1].PerRound[i].Ours {
			t.Errorf("round %d: the floor's measures are not of the round's plain client, outbox and floor: %+v", i+1, res)
		}
	}
	out := runBench(t, "outbox", "--deliveries", "40", "--concurrency", "2", "--rounds", "2", "--sync", "normal")
	for _, want := range []string{"synchronous=NORMAL", "deliveries/s", "lateness p50", "writer busy"} {
		if !strings.Contains(out, want) {
			t.Errorf("text output lacks %q:\n%s", want, out)
		}
	}
	// Two outbox rounds below the table.
	if strings.Count(out, " µs ") != 2 {
		t.Errorf("want one line per outbox round:\n%s", out)
	}
}

func TestBenchOutboxPostgreSQL(t *testing.T) {
	pgtest.Require(t)
	out := runBench(t, "outbox", "--deliveries", "40", "--concurrency", "2", "--rounds", "2", "--database-url", pgtest.URL())
	if !strings.Contains(out, "PostgreSQL, 1 node(s)") || !strings.Contains(out, "deliveries per second") || strings.Contains(out, "floor") {
		t.Errorf("output:\n%s", out)
	}
	out = runBench(t, "outbox", "--deliveries", "40", "--concurrency", "2", "--rounds", "1", "--nodes", "2", "--database-url", pgtest.URL())
	if !strings.Contains(out, "PostgreSQL, 2 node(s)") {
		t.Errorf("output:\n%s", out)
	}
}

func TestBenchBacklog(t *testing.T) {
	res := benchResults(t, runBench(t, "backlog", "--scheduled", "250", "--baseline", "10", "--head", "5", "--claims", "2",
		"--rounds", "2", "--json"), 2, "claim at the head", "heap while claiming", "resident set while claiming")
	positive(t, res[:2])
}

func TestBenchBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"outbox", "--deliveries", "0"}, {"outbox", "--concurrency", "-2"}, {"outbox", "--publishers", "-1"},
		{"outbox", "--per-second", "-5"}, {"outbox", "--sync", "OFF"}, {"outbox", "--deliveries", "ten"}, {"outbox", "extra-arg"},
		{"outbox", "--dir", "/nonexistent/switchboard-bench"}, {"outbox", "--database-url", "mysql://x"}, {"outbox", "--database-url", "postgres://u@h:99999999/db"},
		{"outbox", "--rounds", "0"}, {"outbox", "--nodes", "2"}, {"outbox", "--nodes", "0"}, {"outbox", "--batch", "-1"}, {"outbox", "--endpoint-cap", "1001"}, {"hooks", "--json", "--markdown"}, {"hooks", "--requests", "0"}, {"hooks", "--rounds", "-1"}, {"ws", "--size", "0"},
		{"ws", "--size", "100000"}, {"ws", "--messages", "0"}, {"calls", "--calls", "0"}, {"calls", "--per-process", "-1"},
		{"calls", "--calls", "1000", "--per-process", "1"}, {"backlog", "--scheduled", "0"}, {"backlog", "--head", "101"},
		{"backlog", "--claims", "0"}, {"backlog", "--baseline", "-1"}, {"backlog", "--dir", "/nonexistent/switchboard-bench"},
		{"backlog", "--sync", "OFF"},
	} {
		code, stdout, stderr := runCLI(t, nil, append([]string{"bench"}, args...)...)
		if code != exitUsage || stdout != "" || stderr == "" {
			t.Errorf("bench %v: exit %d, stdout %q, stderr %q; want 2, nothing, a reason", args, code, stdout, stderr)
		}
	}
}
