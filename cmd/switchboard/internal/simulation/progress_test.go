package simulation

import (
	"bytes"
	"strings"
	"testing"
)

// On a terminal the progress bar shows the calls' rate; without one, nothing.
func TestProgressShowsRate(t *testing.T) {
	var b bytes.Buffer
	p := newProgress(&b, 3)
	for range 3 {
		p.add()
	}
	p.finish()
	if !strings.Contains(b.String(), "calls/s") {
		t.Fatalf("progress bar %q has no rate", b.String())
	}
	q := newProgress(nil, 3)
	q.add()
	q.finish()
}
