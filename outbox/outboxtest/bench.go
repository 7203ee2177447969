package outboxtest

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
)

// BenchmarkCycle measures what a store spends on one delivery's whole life, without
// HTTP: concurrent publishes (grouped as the store groups them), then claims and
// successful completions in batches, each completion claiming the room it frees, as
// the dispatcher does. It reports microseconds per delivery, the store's share of
// the outbox's cost, which bounds its rate.
func BenchmarkCycle(b *testing.B, s outboxdriver.Store) {
	const batch = 100
	ep := endpoint("ep_bench", "bench")
	ep.InFlightCap = 10 * batch
	if err := s.CreateEndpoint(ctx, outboxdriver.CreateEndpointParams{Endpoint: ep, Audit: outboxdriver.AuditEntry{Account: ep.Account, EndpointID: ep.ID,
		Action: outboxdriver.AuditCreated, At: t0}}); err != nil {
		b.Fatal(err)
	}
	data := json.RawMessage(`{"callSid":"CA0123456789abcdef","status":"completed"}`)
	n := 0
	for b.Loop() {
		now := time.Now()
		var wg sync.WaitGroup
		for i := range batch {
			ev := outboxdriver.Event{ID: fmt.Sprintf("evt_%d_%d", n, i), Account: "bench", Type: "call.status", CreatedAt: now, Data: data}
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := s.Publish(ctx, outboxdriver.PublishParams{Event: ev, Now: now, Plan: planAll(ev, now)}); err != nil {
					b.Error(err)
				}
			}()
		}
		wg.Wait()
		n++
		params := func(tok string) outboxdriver.ClaimParams {
			return outboxdriver.ClaimParams{Now: now, LeaseUntil: now.Add(time.Minute), Limit: batch / 2, Token: tok}
		}
		jobs, err := s.Claim(ctx, params(fmt.Sprintf("tok_%d_a", n)))
		if err != nil {
			b.Fatal(err)
		}
		for round := 0; len(jobs) > 0; round++ {
			done := make([]outboxdriver.Completion, len(jobs))
			for i, job := range jobs {
				done[i] = succeeded(job, now)
			}
			_, jobs, err = s.CompleteClaim(ctx, outboxdriver.CompleteClaimParams{Outcomes: done, Next: params(fmt.Sprintf("tok_%d_%d", n, round))})
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(n*batch), "µs/delivery")
}

// succeeded completes job with a successful attempt and the endpoint's health change,
// as the engine's decision does.
func succeeded(job outboxdriver.Job, at time.Time) outboxdriver.Completion {
	return outboxdriver.Completion{DeliveryID: job.Delivery.ID, Token: job.Token,
		Decide: func(d outboxdriver.Delivery, ep outboxdriver.Endpoint) (outboxdriver.Change, error) {
			nd := d
			nd.Attempts++
			nd.Status, nd.UpdatedAt, nd.LeaseUntil = outboxdriver.DeliverySucceeded, at, nil
			ne := ep
			ne.Failures, ne.FailingSince, ne.LastDeliveryAt = 0, nil, &at
			return outboxdriver.Change{At: at, Delivery: &nd, Endpoint: &ne, Attempt: &outboxdriver.Attempt{DeliveryID: d.ID,
				Number: nd.Attempts, At: at, ScheduledAt: d.NextAttemptAt, Duration: 800 * time.Microsecond,
				Status: 204, Class: outboxdriver.ClassSuccess}}, nil
		}}
}
