package integration

import (
	"bufio"
	"context"
	"fmt"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/outbox/sqlitestore"
)

// TestOutboxCrashSafety runs a separate process that publishes 10,000 events to a
// loopback receiver, kills it with SIGKILL mid-run, restarts it on the same database
// file, and checks with the receiver's ledger that every event arrived and that the
// duplicates are no more than the deliveries in flight (leased) at the kill.
func TestOutboxCrashSafety(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test publishes 10,000 events")
	}
	const events = 10000
	dir := t.TempDir()
	bin := filepath.Join(dir, "crashpublisher")
	build := exec.Command("go", "build", "-o", bin, "./integration/testdata/outbox/crashpublisher")
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build crashpublisher: %v\n%s", err, out)
	}
	ledger := newDeliveryLedger(events)
	srv := httptest.NewServer(ledger)
	defer srv.Close()
	db := filepath.Join(dir, "outbox.db")
	args := []string{"-db", db, "-url", srv.URL + "/hook", "-n", fmt.Sprint(events)}

	// First run: killed once the receiver has taken a quarter of the events.
	first := exec.Command(bin, args...)
	var stderr strings.Builder
	first.Stderr = &stderr
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ledger.quarter:
	case <-time.After(2 * time.Minute):
		_ = first.Process.Kill()
		_ = first.Wait()
		t.Fatalf("the first run delivered too little before the deadline; stderr:\n%s", stderr.String())
	}
	if err := first.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := first.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("first run ended with %v, want killed", err)
	}
	atKill, _ := ledger.counts()

	// What the dead process left: stored events and deliveries still leased.
	st, err := sqlitestore.Open(context.Background(), db, sqlitestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var stored, leased int
	if err := st.DB().QueryRow(`SELECT count(*) FROM outbox_events`).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if err := st.DB().QueryRow(`SELECT count(*) FROM outbox_deliveries WHERE lease_until IS NOT NULL AND status = 'PENDING'`).Scan(&leased); err != nil {
		t.Fatal(err)
	}
	_ = st.Close()
	t.Logf("at the kill: %d requests received, %d events stored, %d deliveries in flight", atKill, stored, leased)
	if stored >= events {
		t.Logf("note: every event was already stored at the kill; the restart only finishes delivery")
	}

	// Second run on the same file: publishes the rest, reaps the dead leases, finishes.
	second := exec.Command(bin, args...)
	stderr.Reset()
	second.Stderr = &stderr
	out, err := second.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := second.Start(); err != nil {
		t.Fatal(err)
	}
	finished := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(out)
		done := false
		for sc.Scan() {
			done = done || sc.Text() == "done"
		}
		finished <- done
	}()
	waitErr := make(chan error, 1)
	go func() { waitErr <- second.Wait() }()
	select {
	case err := <-waitErr:
		if err != nil || !<-finished {
			t.Fatalf("second run: %v; stderr:\n%s", err, stderr.String())
		}
	case <-time.After(3 * time.Minute):
		_ = second.Process.Kill()
		<-waitErr
		total, unique := ledger.counts()
		t.Fatalf("second run did not finish: %d received, %d unique; stderr:\n%s", total, unique, stderr.String())
	}

	total, unique := ledger.counts()
	duplicates := total - unique
	t.Logf("ledger: %d requests, %d distinct events, %d duplicates (bound %d)", total, unique, duplicates, leased)
	if unique != events {
		t.Fatalf("%d distinct events arrived, want %d", unique, events)
	}
	for i := range events {
		if ledger.seen[fmt.Sprintf("evt-%d", i)] == 0 {
			t.Fatalf("evt-%d never arrived", i)
		}
	}
	if duplicates > leased {
		t.Fatalf("%d duplicates, more than the %d deliveries in flight at the kill", duplicates, leased)
	}
}
