package main

import (
	"errors"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/switchboard-voice/switchboard/featureserver/internal/console/consoletest"
	"github.com/switchboard-voice/switchboard/internal/testkit"
)

// The command writes every screenshot the README and docs/rest-api.md show, each a PNG of 1280×800.
func TestScreenshots(t *testing.T) {
	if _, err := consoletest.FindChromium(); errors.Is(err, consoletest.ErrNoChromium) {
		testkit.SkipMissing(t, "Chromium", err.Error()+" (.ci/run installs Debian's chromium)")
	}
	out := t.TempDir()
	if err := run(out); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"console-glance.png", "console-endpoint.png", "console-delivery.png", "console-call.png"} {
		f, err := os.Open(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := png.DecodeConfig(f)
		f.Close()
		if err != nil || cfg.Width != 1280 || cfg.Height != 800 {
			t.Errorf("%s: %dx%d, %v; want a 1280x800 PNG", name, cfg.Width, cfg.Height, err)
		}
		if _, err := os.Stat(filepath.Join("..", "..", "..", "..", "docs", "images", name)); err != nil {
			t.Errorf("docs/images/%s is not committed: %v", name, err)
		}
	}
}
