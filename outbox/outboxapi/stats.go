package outboxapi

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/switchboard-voice/switchboard/outbox"
)

// The attempt statistics read the endpoint's newest deliveries and their attempts.
// A delivery's attempts can come days after its creation (a schedule's last retry),
// so deliveries created up to statsReach before the window are read too; at most
// statsScan deliveries are, and an answer that stopped there says so (truncated).
const (
	statsReach = 72 * time.Hour
	statsScan  = 2000
	statsPage  = 500
)

type statsInput struct {
	ID    string `path:"id" maxLength:"128" doc:"Endpoint id"`
	Hours int    `query:"hours" minimum:"1" maximum:"168" default:"24" doc:"The window: this many hours up to now, in hourly buckets"`
}

// WebhookStatsBucket counts the attempts of one hour by outcome.
type WebhookStatsBucket struct {
	Start    time.Time      `json:"start"`
	Outcomes map[string]int `json:"outcomes" doc:"Attempts by outcome (as an attempt's outcome); absent outcomes had none"`
}

// WebhookStats are an endpoint's attempts over a window, by hour and outcome.
type WebhookStats struct {
	Since         time.Time            `json:"since" doc:"The start of the first bucket (whole hours)"`
	Until         time.Time            `json:"until"`
	BucketSeconds int                  `json:"bucketSeconds"`
	Buckets       []WebhookStatsBucket `json:"buckets" doc:"Oldest first, one per hour, empty ones included"`
	Totals        map[string]int       `json:"totals" doc:"Attempts in the window by outcome"`
	Truncated     bool                 `json:"truncated" doc:"Only the newest 2,000 deliveries were read: older ones may hold more attempts in the window"`
}

type statsOutput struct{ Body WebhookStats }

func (s *server) registerStats() {
	huma.Register(s.api, s.operation("webhook-stats", http.MethodGet, "/api/v1/webhooks/{id}/stats",
		"An endpoint's attempts over the last hours, by hour and outcome", http.StatusOK),
		func(ctx context.Context, in *statsInput) (*statsOutput, error) {
			account := principal(ctx).Account
			if _, err := s.ob.GetEndpoint(ctx, account, in.ID); err != nil {
				return nil, s.problem(err, "endpoint")
			}
			now := s.cfg.Clock.Now().UTC()
			since := now.Truncate(time.Hour).Add(-time.Duration(in.Hours-1) * time.Hour)
			st := WebhookStats{Since: since, Until: now, BucketSeconds: 3600, Totals: map[string]int{},
				Buckets: make([]WebhookStatsBucket, in.Hours)}
			for i := range st.Buckets {
				st.Buckets[i] = WebhookStatsBucket{Start: since.Add(time.Duration(i) * time.Hour), Outcomes: map[string]int{}}
			}
			scanned, before := 0, ""
			for scanned < statsScan {
				ds, err := s.ob.ListDeliveries(ctx, outbox.DeliveryQuery{Account: account, EndpointID: in.ID, BeforeID: before, Limit: statsPage})
				if err != nil {
					return nil, s.problem(err, "query")
				}
				done := len(ds) < statsPage
				for _, d := range ds {
					if d.CreatedAt.Before(since.Add(-statsReach)) {
						done = true
						break
					}
					if scanned == statsScan {
						st.Truncated = true
						break
					}
					scanned++
					if d.Attempts == 0 {
						continue
					}
					_, as, err := s.ob.GetDelivery(ctx, account, d.ID)
					if err != nil {
						return nil, s.problem(err, "delivery")
					}
					for _, a := range as {
						if a.Number == 0 || a.At.Before(since) || a.At.After(now) {
							continue // the record of an event held by a pause is no attempt
						}
						b := int(a.At.Sub(since) / time.Hour)
						st.Buckets[b].Outcomes[string(a.Class)]++
						st.Totals[string(a.Class)]++
					}
				}
				if done || len(ds) == 0 {
					break
				}
				before = ds[len(ds)-1].ID
			}
			return &statsOutput{Body: st}, nil
		})
}
