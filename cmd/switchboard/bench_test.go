package main

import (
	"runtime"
	"strings"
	"testing"
)

// TestBenchOutbox: a small run prints both rates, their ratio and the lateness, in
// text and as one JSON object, and leaves its temporary database behind no one.
func TestBenchOutbox(t *testing.T) {
	code, stdout, stderr := runCLI(t, nil, "bench", "outbox", "--deliveries", "150", "--concurrency", "4", "--json")
	if code != exitOK {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	got := decodeJSONLine[benchOutboxJSON](t, stdout)
	if got.Deliveries != 150 || got.Concurrency != 4 || got.Publishers != 16 || got.Synchronous != "FULL" {
		t.Fatalf("options echoed: %+v", got)
	}
	if got.PlainPerSecond <= 0 || got.OutboxPerSecond <= 0 || got.Ratio <= 0 || got.LatenessP99MS < got.LatenessP50MS {
		t.Fatalf("figures: %+v", got)
	}
	if got.WriterBusy <= 0 || got.WriterBusy > 1 || got.WritesPerTransaction < 1 {
		t.Fatalf("writer figures: %+v", got)
	}
	if runtime.GOOS == "linux" && (got.PlainCPUMicros <= 0 || got.OutboxCPUMicros <= 0 || got.PlainCores <= 0 || got.OutboxCores <= 0) {
		t.Fatalf("CPU figures: %+v", got)
	}

	code, stdout, stderr = runCLI(t, nil, "bench", "outbox", "--deliveries", "100", "--concurrency", "2", "--skip-plain", "--sync", "normal")
	if code != exitOK {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	wants := []string{"synchronous=NORMAL", "deliveries/s", "lateness after schedule", "SQLite writer"}
	if runtime.GOOS == "linux" {
		wants = append(wants, "µs a delivery")
	}
	for _, want := range wants {
		if !strings.Contains(stdout, want) {
			t.Errorf("text output lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "ratio") || strings.Contains(stdout, "plain") {
		t.Errorf("--skip-plain printed the plain client:\n%s", stdout)
	}
}

func TestBenchOutboxBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--deliveries", "0"}, {"--concurrency", "-2"}, {"--publishers", "-1"}, {"--per-second", "-5"},
		{"--sync", "OFF"}, {"--deliveries", "ten"}, {"extra-arg"}, {"--dir", "/nonexistent/switchboard-bench"},
	} {
		code, stdout, stderr := runCLI(t, nil, append([]string{"bench", "outbox"}, args...)...)
		if code != exitUsage || stdout != "" || stderr == "" {
			t.Errorf("bench outbox %v: exit %d, stdout %q, stderr %q; want 2, nothing, a reason", args, code, stdout, stderr)
		}
	}
}
