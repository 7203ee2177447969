package main

import (
	"os"
	"testing"

	"github.com/switchboard-voice/switchboard/cmd/switchboard/internal/benchkit"
)

func TestMain(m *testing.M) {
	// `bench calls` re-executes this binary as its helper processes.
	benchkit.RunWorkerIfAsked()
	setLogTimeFormat()
	os.Exit(m.Run())
}
