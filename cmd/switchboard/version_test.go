package main

import (
	"bytes"
	"context"
	"runtime/debug"
	"strings"
	"testing"
)

func TestRevisionOf(t *testing.T) {
	for _, tc := range []struct {
		settings []debug.BuildSetting
		want     string
	}{
		{nil, ""},
		{[]debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.time", Value: "2026-12-01T12:00:00Z"}, {Key: "vcs.modified", Value: "false"}},
			"0123456789ab 2026-12-01T12:00:00Z"},
		{[]debug.BuildSetting{{Key: "vcs.revision", Value: "abc"}, {Key: "vcs.modified", Value: "true"}}, "abc+dirty"},
	} {
		if got := revisionOf(tc.settings); got != tc.want {
			t.Errorf("revisionOf(%v) = %q, want %q", tc.settings, got, tc.want)
		}
	}
}

// --version is the version command's line.
func TestVersionFlag(t *testing.T) {
	var flag, cmd, stderr bytes.Buffer
	if code := run(context.Background(), []string{"--version"}, nil, &flag, &stderr, func(string) string { return "" }); code != exitOK {
		t.Fatalf("--version: exit %d, %s", code, stderr.String())
	}
	if code := run(context.Background(), []string{"version"}, nil, &cmd, &stderr, func(string) string { return "" }); code != exitOK {
		t.Fatalf("version: exit %d, %s", code, stderr.String())
	}
	if flag.String() != cmd.String() || !strings.HasPrefix(flag.String(), "switchboard ") {
		t.Errorf("--version printed %q, version %q", flag.String(), cmd.String())
	}
}
