package benchkit

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/coder/websocket"
	"github.com/rs/zerolog"

	"github.com/switchboard-voice/switchboard/callctl"
	"github.com/switchboard-voice/switchboard/internal/exampleapp"
	"github.com/switchboard-voice/switchboard/transport"
	"github.com/switchboard-voice/switchboard/transport/wsclient"
)

// WorkerEnv, set in a process's environment, makes RunWorkerIfAsked run that process
// as one of the helpers `bench calls` spreads its calls over: "app ADDR" serves the
// waiting WebSocket app on ADDR (host:0), "client" holds calls on command.
const WorkerEnv = "SWITCHBOARD_BENCH_WORKER"

// CallsOptions shape `bench calls`.
type CallsOptions struct {
	// Calls is how many calls are held live at once, across every process.
	Calls int
	// PerProcess caps the calls one client process holds; 0: what its open-files
	// limit allows (RLIMIT_NOFILE raised to the hard limit, less a reserve).
	PerProcess int
	Rounds     int
	// Stderr receives the helper processes' diagnostics (default os.Stderr).
	Stderr io.Writer
	// Progress, when set, is told what each phase is doing.
	Progress func(string)
}

// fileReserve is the descriptors a process keeps for what is not a call.
const fileReserve = 256

// RaiseFileLimit lifts RLIMIT_NOFILE to its hard limit (every live call holds a
// socket) and returns the limit now in force.
func RaiseFileLimit() uint64 {
	var l syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l) != nil {
		return 0
	}
	if l.Cur < l.Max {
		l.Cur = l.Max
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l)
		_ = syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l)
	}
	return l.Cur
}

// Plan is how `bench calls` spreads its calls: Processes client processes, each
// with an app process of its own listening on its own loopback address
// (127.0.0.1, 127.0.0.2, ...), so that no process holds more than its descriptors
// allow and no address pair runs out of ephemeral ports.
type Plan struct {
	Processes  int
	PerProcess []int
	Addresses  []string
}

// PlanCalls spreads calls over processes holding at most perProcess each (0: the
// open-files limit less a reserve).
func PlanCalls(calls, perProcess int) (Plan, error) {
	if calls < 1 {
		return Plan{}, fmt.Errorf("benchkit: calls must be at least 1, got %d", calls)
	}
	if perProcess <= 0 {
		limit := RaiseFileLimit()
		if limit <= fileReserve {
			return Plan{}, fmt.Errorf("benchkit: open-files limit %d leaves no room for calls", limit)
		}
		perProcess = int(min(limit-fileReserve, 1<<20))
	}
	n := (calls + perProcess - 1) / perProcess
	if n > 250 {
		return Plan{}, fmt.Errorf("benchkit: %d calls at %d a process need %d processes (at most 250)", calls, perProcess, n)
	}
	p := Plan{Processes: n}
	for i := range n {
		share := calls / n
		if i < calls%n {
			share++
		}
		p.PerProcess = append(p.PerProcess, share)
		p.Addresses = append(p.Addresses, fmt.Sprintf("127.0.0.%d", i+1))
	}
	return p, nil
}

// Calls holds o.Calls WebSocket calls live at once (each has had its session:new
// acked and waits for a command, as a call on hold does) and measures the memory
// (heap and goroutine stacks) and goroutines of the process holding them, per call,
// against as many bare coder/websocket connections to the same app, each with the
// reader goroutine every live connection needs (the baseline: what the socket
// alone costs). The apps run in processes of their own, so nothing of theirs is
// counted.
func Calls(ctx context.Context, o CallsOptions) ([]Result, Plan, error) {
	plan, err := PlanCalls(o.Calls, o.PerProcess)
	if err != nil {
		return nil, plan, err
	}
	if o.Stderr == nil {
		o.Stderr = os.Stderr
	}
	// Every helper's stderr is copied by a goroutine of its own.
	o.Stderr = zerolog.SyncWriter(o.Stderr)
	progress := o.Progress
	if progress == nil {
		progress = func(string) {}
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, plan, err
	}
	var workers []*worker
	defer func() {
		for _, w := range workers {
			w.stop()
		}
	}()
	for i := range plan.Processes {
		app, err := startWorker(ctx, exe, "app "+plan.Addresses[i]+":0", o.Stderr)
		if err != nil {
			return nil, plan, err
		}
		workers = append(workers, app)
		var addr struct{ Addr string }
		if err := app.receive(&addr); err != nil {
			return nil, plan, fmt.Errorf("app process: %w", err)
		}
		client, err := startWorker(ctx, exe, "client", o.Stderr)
		if err != nil {
			return nil, plan, err
		}
		workers = append(workers, client)
		client.app, client.calls, client.index = addr.Addr, plan.PerProcess[i], i
	}
	var clients []*worker
	for _, w := range workers {
		if w.app != "" {
			clients = append(clients, w)
		}
	}
	measures := []Measure{{"memory per live call", "B", Lower}, {"heap per live call", "B", Lower},
		{"stacks per live call", "B", Lower}, {"goroutines per live call", "goroutines", Lower}, {"set up per second", "calls/s", Higher}}
	side := func(kind string, index int) Side {
		return func(ctx context.Context, round int) (map[string]float64, error) {
			progress(fmt.Sprintf("round %d: %d %s live", round+1, o.Calls, kind))
			var (
				total holding
				mu    sync.Mutex
			)
			err := allWorkers(clients, func(w *worker) error {
				src := sourceAddress(round*2+index, w.index)
				if err := w.send(fmt.Sprintf("%s %s %d %s", kind, w.app, w.calls, src)); err != nil {
					return err
				}
				var h holding
				if err := w.receive(&h); err != nil {
					return err
				}
				mu.Lock()
				total.add(h)
				mu.Unlock()
				return nil
			})
			if err == nil {
				// Every process holds its share now: all o.Calls are live at once.
				err = allWorkers(clients, func(w *worker) error {
					if err := w.send("release"); err != nil {
						return err
					}
					var done struct{}
					return w.receive(&done)
				})
			}
			if err != nil {
				return nil, err
			}
			n := float64(o.Calls)
			return map[string]float64{
				"memory per live call": float64(total.Heap+total.Stacks) / n, "heap per live call": float64(total.Heap) / n,
				"stacks per live call": float64(total.Stacks) / n, "goroutines per live call": float64(total.Goroutines) / n,
				"set up per second": n / max(total.Seconds, 1e-9),
			}, nil
		}
	}
	res, err := Interleave(ctx, o.Rounds, measures, side("calls", 0), side("raw", 1))
	return res, plan, err
}

// sourceAddress is the loopback address client process i dials from in the k-th
// side run (two a round): 127.(k+1).0.(i+1), a fresh one for every run. The
// connections of a run end in TIME_WAIT on one end or the other; a run that dialed
// from the same address could pick a port whose address pair is still waiting
// there, and its SYN would go unanswered (in a 5-round run of 100k calls, a few
// calls of round 2 never came live). After 254 runs the addresses come round again,
// long after their TIME_WAIT (60 s) is over.
func sourceAddress(k, i int) string {
	return fmt.Sprintf("127.%d.0.%d", k%254+1, i+1)
}

// holding is what a client process reports once its share is live.
type holding struct {
	Heap, Stacks, Goroutines int64
	// Seconds is how long setting them up took.
	Seconds float64
}

func (h *holding) add(o holding) {
	h.Heap += o.Heap
	h.Stacks += o.Stacks
	h.Goroutines += o.Goroutines
	h.Seconds = max(h.Seconds, o.Seconds)
}

func allWorkers(ws []*worker, fn func(*worker) error) error {
	errs := make([]error, len(ws))
	var wg sync.WaitGroup
	for i, w := range ws {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = fn(w) }()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// worker is a helper process spoken to in lines: commands on its stdin, one JSON
// object (or {"error": ...}) per reply on its stdout.
type worker struct {
	cmd   *exec.Cmd
	in    io.WriteCloser
	out   *bufio.Reader
	app   string // a client's app address
	calls int
	index int // a client's place in the plan
}

func startWorker(ctx context.Context, exe, role string, stderr io.Writer) (*worker, error) {
	cmd := exec.CommandContext(ctx, exe)
	cmd.Env = append(os.Environ(), WorkerEnv+"="+role)
	cmd.Stderr = stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("benchkit: starting a %s process: %w", strings.Fields(role)[0], err)
	}
	return &worker{cmd: cmd, in: in, out: bufio.NewReader(out)}, nil
}

func (w *worker) send(line string) error {
	_, err := io.WriteString(w.in, line+"\n")
	return err
}

func (w *worker) receive(v any) error {
	line, err := w.out.ReadBytes('\n')
	if err != nil {
		return fmt.Errorf("benchkit: helper process ended: %w", err)
	}
	var e struct{ Error string }
	if json.Unmarshal(line, &e) == nil && e.Error != "" {
		return errors.New(e.Error)
	}
	return json.Unmarshal(line, v)
}

// stop closes the worker's stdin, which ends it, and waits.
func (w *worker) stop() {
	_ = w.in.Close()
	_ = w.cmd.Wait()
}

// RunWorkerIfAsked runs this process as a `bench calls` helper when WorkerEnv says
// so, and then exits; otherwise it returns at once. Call it first in main (and in
// TestMain of a package whose tests run the bench).
func RunWorkerIfAsked() {
	role := os.Getenv(WorkerEnv)
	if role == "" {
		return
	}
	RaiseFileLimit()
	out := json.NewEncoder(os.Stdout)
	in := bufio.NewScanner(os.Stdin)
	var err error
	switch f := strings.Fields(role); {
	case len(f) == 2 && f[0] == "app":
		err = serveApp(f[1], out)
	case len(f) == 1 && f[0] == "client":
		err = holdCalls(in, out)
	default:
		err = fmt.Errorf("benchkit: unknown worker role %q", role)
	}
	if err != nil {
		_ = out.Encode(map[string]string{"error": err.Error()})
		os.Exit(1)
	}
	os.Exit(0)
}

// serveApp serves the waiting WebSocket app on addr until stdin closes: /wait acks
// session:new with no verbs, so each call stays live until /hangup; /live?want=N
// answers once N sessions are live.
func serveApp(addr string, out *json.Encoder) error {
	waiting := &exampleapp.WSApp{Waiting: true}
	mux := http.NewServeMux()
	mux.Handle("/wait", waiting)
	mux.HandleFunc("/live", func(w http.ResponseWriter, r *http.Request) {
		want, err := strconv.Atoi(r.URL.Query().Get("want"))
		if err != nil {
			http.Error(w, "want a number", http.StatusBadRequest)
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), 5*time.Minute)
		defer cancel()
		if err := waiting.WaitLive(ctx, want); err != nil {
			http.Error(w, fmt.Sprintf("%d live: %v", waiting.Live(), err), http.StatusRequestTimeout)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("/hangup", func(w http.ResponseWriter, r *http.Request) {
		// A hangup that did not reach a call would leave the release waiting for it:
		// say so, and why, instead; a send that blocks fails as /live does.
		ctx, cancel := context.WithTimeout(r.Context(), 5*time.Minute)
		defer cancel()
		if err := waiting.HangupAll(ctx); err != nil {
			msg := strings.ReplaceAll(err.Error(), "\n", "; ")
			http.Error(w, "hangup: "+msg[:min(len(msg), 1000)], http.StatusInternalServerError)
		}
	})
	ln, err := (&net.ListenConfig{KeepAlive: noTCPKeepAlive}).Listen(context.Background(), "tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: time.Minute}
	go func() { _ = srv.Serve(ln) }()
	if err := out.Encode(map[string]string{"addr": ln.Addr().String()}); err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, os.Stdin)
	return nil
}

// holdCalls answers commands: "calls ADDR N SRC" or "raw ADDR N SRC" opens N calls
// or bare sockets from the local address SRC to the app at ADDR and reports what
// they hold; "release" ends them and gives their memory back.
func holdCalls(in *bufio.Scanner, out *json.Encoder) error {
	var release func() error
	for in.Scan() {
		f := strings.Fields(in.Text())
		var reply any = struct{}{}
		var err error
		switch {
		case len(f) == 4 && (f[0] == "calls" || f[0] == "raw") && release == nil:
			var n int
			if n, err = strconv.Atoi(f[2]); err == nil {
				var h holding
				hc := sourceClient(f[3])
				if f[0] == "calls" {
					h, release, err = liveCalls(hc, f[1], n)
				} else {
					h, release, err = rawSockets(hc, f[1], n)
				}
				reply = &h
			}
		case len(f) == 1 && f[0] == "release" && release != nil:
			err, release = release(), nil
			// The next run starts from what a fresh process holds.
			debug.FreeOSMemory()
		default:
			err = fmt.Errorf("benchkit: unexpected command %q", in.Text())
		}
		if err != nil {
			reply = map[string]string{"error": err.Error()}
		}
		if err := out.Encode(reply); err != nil {
			return err
		}
	}
	return in.Err()
}

// heapAndStacks measures after a few collections: a collection halves a goroutine
// stack using under a quarter of it, so a stack grown while dialing returns to its
// steady size over a few cycles, as in a long-running node.
func heapAndStacks() (heap, stacks, goroutines int64) {
	for range 6 {
		runtime.GC()
	}
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc), int64(m.StackInuse), int64(runtime.NumGoroutine())
}

func measured(h0, s0, g0 int64, start time.Time) holding {
	h1, s1, g1 := heapAndStacks()
	return holding{Heap: h1 - h0, Stacks: s1 - s0, Goroutines: g1 - g0, Seconds: time.Since(start).Seconds()}
}

// noTCPKeepAlive turns TCP keep-alive off on both ends of every bench connection.
// Go's default probes an idle connection every 15 s: with 200 000 ends on
// loopback, the probes overflowed the kernel's input queue (softnet drops by the
// million) and connections were aborted as timed out mid-run. On loopback the
// probes find nothing; a call's own pings are WebSocket's.
const noTCPKeepAlive = -1

// sourceClient is the HTTP client both sides dial with: the call-control egress
// rules with loopback allowed, every connection from the local address src.
func sourceClient(src string) *http.Client {
	// A minute, as the calls' handshake: a machine busy setting up 100k
	// connections can take longer than the 10 s default to answer a SYN.
	const connectTimeout = time.Minute
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: connectTimeout, KeepAlive: noTCPKeepAlive,
		// Bound to src, a socket takes its port at connect, with the whole address
		// pair known, not at bind: a bind picks among the ports no socket of src
		// holds, TIME_WAIT included, and the range runs out under a process's share.
		Control: bindAddressNoPort}
	return transport.NewHTTPClient(transport.CallControlRules(true), transport.ClientOptions{
		ConnectTimeout: connectTimeout,
		Connect: func(ctx context.Context, network, address string, _ func(context.Context, string, string) (net.Conn, error)) (net.Conn, error) {
			return d.DialContext(ctx, network, address)
		},
	})
}

// rawSockets opens n bare WebSocket connections (the session protocol not spoken),
// each with a reader goroutine as every live connection needs for pings and closes.
func rawSockets(hc *http.Client, addr string, n int) (holding, func() error, error) {
	h0, s0, g0 := heapAndStacks()
	start := time.Now()
	conns := make([]*websocket.Conn, 0, n)
	closeAll := func() error {
		for _, c := range conns {
			_ = c.CloseNow()
		}
		hc.CloseIdleConnections()
		return nil
	}
	for range n {
		c, _, err := websocket.Dial(context.Background(), "ws://"+addr+"/wait", &websocket.DialOptions{HTTPClient: hc, Subprotocols: []string{wsclient.Subprotocol}})
		if err != nil {
			_ = closeAll()
			return holding{}, nil, fmt.Errorf("bare socket %d: %w", len(conns)+1, err)
		}
		go func() { _, _, _ = c.Read(context.Background()) }()
		conns = append(conns, c)
	}
	return measured(h0, s0, g0, start), closeAll, nil
}

// liveCalls starts n calls that stay live; the release hangs them all up from the
// app and checks that each ended so.
func liveCalls(hc *http.Client, addr string, n int) (holding, func() error, error) {
	o := callctl.Options{AppURL: "ws://" + addr + "/wait",
		WebSocket:  wsclient.Options{HTTPClient: hc, HandshakeTimeout: time.Minute},
		AckTimeout: time.Minute, IdleLimit: time.Hour, EgressRules: transport.CallControlRules(true)}
	h0, s0, g0 := heapAndStacks()
	var (
		wg     sync.WaitGroup
		failed atomic.Int64
		first  atomic.Value
	)
	ctx, cancel := context.WithCancel(context.Background())
	// Ended by the first call that fails: the ramp-up stops waiting for it at once.
	failedCtx, failNow := context.WithCancel(context.Background())
	defer failNow()
	start := time.Now()
	release := func() error {
		defer hc.CloseIdleConnections()
		defer cancel()
		if err := appGet(addr, "/hangup"); err != nil {
			return err
		}
		wg.Wait()
		if f := failed.Load(); f > 0 {
			return fmt.Errorf("%d of %d calls did not end with the app's hangup (first: %v)", f, n, first.Load())
		}
		return appGet(addr, "/live?want=0")
	}
	// The listen backlog is finite: ramp up in batches, each live before the next.
	const batch = 500
	for i := 0; i < n; i += batch {
		for range min(batch, n-i) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r, err := callctl.Run(ctx, o)
				if err == nil && r.Reason != callctl.ReasonAppHangup {
					err = fmt.Errorf("ended: %s", r.Reason)
					if len(r.Alerts) > 0 {
						err = fmt.Errorf("%w (%s)", err, r.Alerts[0].Detail)
					}
				}
				if err != nil {
					failed.Add(1)
					first.CompareAndSwap(nil, err.Error())
					failNow()
				}
			}()
		}
		if err := appGetCtx(failedCtx, addr, fmt.Sprintf("/live?want=%d", min(i+batch, n))); err != nil {
			cancel()
			wg.Wait()
			if f := failed.Load(); f > 0 {
				err = fmt.Errorf("%d of %d calls failed before all were live (first: %v)", f, n, first.Load())
			}
			return holding{}, nil, err
		}
	}
	return measured(h0, s0, g0, start), release, nil
}

func appGet(addr, path string) error { return appGetCtx(context.Background(), addr, path) }

func appGetCtx(ctx context.Context, addr, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+path, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("app %s: %s %s", path, resp.Status, strings.TrimSpace(string(b)))
	}
	return nil
}
