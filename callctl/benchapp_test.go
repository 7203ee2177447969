package callctl_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/internal/exampleapp"
)

const benchAppEnv = "CALLCTL_BENCH_APP"

// raiseFileLimit lifts RLIMIT_NOFILE to its hard limit: every live call holds a
// socket.
func raiseFileLimit() uint64 {
	var l syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l) != nil {
		return 0
	}
	l.Cur = l.Max
	_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l)
	return l.Cur
}

// serveBenchApp serves the example WebSocket apps: /wait acks session:new with no
// verbs (calls stay live until /hangup), /ivr runs the example IVR. It prints its
// address and stops when stdin closes.
func serveBenchApp() {
	raiseFileLimit()
	waiting := &exampleapp.WSApp{Waiting: true}
	mux := http.NewServeMux()
	mux.Handle("/wait", waiting)
	mux.Handle("/ivr", &exampleapp.WSApp{})
	// /live?want=N answers once N sessions are live (204), or 408 after a minute.
	mux.HandleFunc("/live", func(w http.ResponseWriter, r *http.Request) {
		want, err := strconv.Atoi(r.URL.Query().Get("want"))
		if err != nil {
			http.Error(w, "want a number", http.StatusBadRequest)
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), time.Minute)
		defer cancel()
		if err := waiting.WaitLive(ctx, want); err != nil {
			http.Error(w, err.Error(), http.StatusRequestTimeout)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("/hangup", func(w http.ResponseWriter, r *http.Request) { _ = waiting.HangupAll(r.Context()) })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println("ERROR", err)
		os.Exit(1)
	}
	srv := &http.Server{Handler: mux}
	go func() { _ = srv.Serve(ln) }()
	fmt.Println("ADDR", ln.Addr().String())
	_, _ = io.Copy(io.Discard, os.Stdin)
	os.Exit(0)
}

// benchApp starts the application process and returns its host:port.
func benchApp(b *testing.B) string {
	b.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), benchAppEnv+"=1")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		stdin.Close()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "ADDR ") {
		b.Fatalf("app process: %q %v", line, err)
	}
	return strings.TrimSpace(strings.TrimPrefix(line, "ADDR "))
}

func appGet(addr, path string) (string, error) {
	resp, err := http.Get("http://" + addr + path)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// waitLive waits until the app counts n live sessions (the app answers when it does,
// or after a minute with the count it has).
func waitLive(addr string, n int) error {
	resp, err := http.Get(fmt.Sprintf("http://%s/live?want=%d", addr, n))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusNoContent {
		return fmt.Errorf("app: %s %s", resp.Status, b)
	}
	return nil
}
