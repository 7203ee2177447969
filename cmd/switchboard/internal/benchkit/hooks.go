package benchkit

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/switchboard-voice/switchboard/fragment"
	"github.com/switchboard-voice/switchboard/transport"
)

// HooksOptions shape `bench hooks`.
type HooksOptions struct {
	// Requests is how many hooks each side sends a round, one after the other.
	Requests int
	Rounds   int
}

// hookPayload is a typical call hook payload.
var hookPayload = map[string]any{
	"call_sid": "2ba2a3b0-1c1d-4b55-9a37-0e8d3c1e2f3a", "direction": "inbound",
	"from": "+15551234567", "to": "+15557654321", "call_status": "ringing",
	"account_sid": "acc-1", "application_sid": "app-1", "sip_status": 100,
}

// Hooks measures a call hook's round trip through transport.HookClient (retries,
// egress checks, capped body read) against the same request made with a plain
// net/http client, both to one loopback app answering a small verb array.
func Hooks(ctx context.Context, o HooksOptions) ([]Result, error) {
	if o.Requests < 1 {
		return nil, fmt.Errorf("benchkit: requests must be at least 1, got %d", o.Requests)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`[{"verb":"say","text":"hello"}]`))
	})}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	url := "http://" + ln.Addr().String() + "/call"

	target, err := fragment.Parse(url)
	if err != nil {
		return nil, err
	}
	hc := transport.NewHookClient(transport.HookClientOptions{Rules: transport.CallControlRules(true)})
	defer hc.CloseIdleConnections()
	ours := func() error {
		resp, err := hc.Do(ctx, transport.HookRequest{Target: target, Payload: hookPayload})
		if err == nil && resp.Status != http.StatusOK {
			err = fmt.Errorf("status %d", resp.Status)
		}
		return err
	}
	plain := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	defer plain.CloseIdleConnections()
	baseline := func() error {
		body, err := json.Marshal(hookPayload)
		if err != nil {
			return err
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("User-Agent", "jambonz")
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json")
		resp, err := plain.Do(req)
		if err != nil {
			return err
		}
		_, err = io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		if err == nil && resp.StatusCode != http.StatusOK {
			err = fmt.Errorf("status %d", resp.StatusCode)
		}
		return err
	}
	m := Measure{Name: "hook round trip", Unit: "µs", Better: Lower}
	return timedPair(ctx, o.Rounds, m, o.Requests, ours, baseline)
}

// chunk is how many operations one side runs before the other takes its turn, in
// the timed benches: short turns put a passing load on both sides alike.
const chunk = 200

// timedPair runs n operations of each side a round, in turns of chunk operations
// (the baseline first in even rounds), and reports microseconds an operation. One
// operation of each before the clock starts opens the connections.
func timedPair(ctx context.Context, rounds int, m Measure, n int, ours, baseline func() error) ([]Result, error) {
	if rounds < 1 {
		return nil, fmt.Errorf("benchkit: rounds must be at least 1, got %d", rounds)
	}
	if err := ours(); err != nil {
		return nil, err
	}
	if err := baseline(); err != nil {
		return nil, err
	}
	per := make([]Round, 0, rounds)
	for round := range rounds {
		var spent [2]time.Duration // ours, baseline
		order := [2]int{1, 0}
		if round%2 == 1 {
			order = [2]int{0, 1}
		}
		ops := [2]func() error{ours, baseline}
		for done := 0; done < n; done += chunk {
			for _, side := range order {
				start := time.Now()
				for range min(chunk, n-done) {
					if err := ops[side](); err != nil {
						return nil, fmt.Errorf("round %d: %w", round+1, err)
					}
				}
				spent[side] += time.Since(start)
			}
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		us := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1000 / float64(n) }
		o, b := us(spent[0]), us(spent[1])
		per = append(per, Round{Ours: o, Baseline: b, Ratio: ratio(o, b)})
	}
	return []Result{summarise(m, per)}, nil
}
