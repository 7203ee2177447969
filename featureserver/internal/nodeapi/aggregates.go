package nodeapi

import (
	"context"
	"net/http"
	"sort"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore"
)

// callStatsScan bounds the calls one call-stats answer counts: the newest first,
// so a busy account's answer says it was cut (truncated) rather than read its
// whole history on every request.
const callStatsScan = 10000

type whoamiInput struct {
	Authorization string `header:"Authorization" doc:"Bearer API token of an account"`
}

type whoamiOutput struct {
	Body struct {
		AccountSid string `json:"account_sid"`
		Name       string `json:"name"`
	}
}

type callStatsInput struct {
	AccountParams
	Since time.Time `query:"since" doc:"Only calls created at or after this time (RFC 3339); default the last 24 hours"`
}

// CallStatusCount is how many calls ended in (or are now in) one status.
type CallStatusCount struct {
	Status string `json:"status"`
	Count  int    `json:"count"`
}

type callStatsOutput struct {
	Body struct {
		Since     time.Time         `json:"since"`
		Total     int               `json:"total"`
		Active    int               `json:"active" doc:"Calls still running"`
		ByStatus  []CallStatusCount `json:"by_status" doc:"Most frequent first, then by name"`
		Truncated bool              `json:"truncated" doc:"More calls than one answer counts (the newest 10,000 were)"`
	}
}

// registerAggregates registers what a dashboard reads besides the lists: the
// account of a token (so that a person signs in with the token alone) and the
// account's calls counted by status.
func (a *API) registerAggregates(api huma.API) {
	huma.Register(api, huma.Operation{
		OperationID: "whoami", Method: http.MethodGet, Path: "/v1/Me",
		Summary: "The account of the bearer token",
	}, func(ctx context.Context, in *whoamiInput) (*whoamiOutput, error) {
		acct, err := a.accountOfToken(ctx, in.Authorization, "")
		if err != nil {
			return nil, err
		}
		out := &whoamiOutput{}
		out.Body.AccountSid, out.Body.Name = acct.Sid, acct.Name
		return out, nil
	})
	registerForAccount(a, api, huma.Operation{
		OperationID: "call-stats", Method: http.MethodGet, Path: "/v1/Accounts/{account}/CallStats",
		Summary: "The account's calls since a time, counted by status",
	}, func(ctx context.Context, acct nodestore.Account, in *callStatsInput) (*callStatsOutput, error) {
		since := in.Since
		if since.IsZero() {
			since = a.clock.Now().Add(-24 * time.Hour)
		}
		list, err := a.calls.List(ctx, nodestore.ListCallsParams{AccountSid: acct.Sid, Limit: callStatsScan, Since: since})
		if err != nil {
			return nil, a.internal(err)
		}
		out := &callStatsOutput{}
		out.Body.Since = since.UTC()
		counts := map[string]int{}
		for _, c := range list {
			if c.CreatedAt.Before(since) {
				continue
			}
			out.Body.Total++
			if c.Active {
				out.Body.Active++
			}
			counts[c.CallStatus]++
		}
		out.Body.Truncated = len(list) == callStatsScan
		out.Body.ByStatus = make([]CallStatusCount, 0, len(counts))
		for s, n := range counts {
			out.Body.ByStatus = append(out.Body.ByStatus, CallStatusCount{Status: s, Count: n})
		}
		sort.Slice(out.Body.ByStatus, func(i, j int) bool {
			x, y := out.Body.ByStatus[i], out.Body.ByStatus[j]
			return x.Count > y.Count || x.Count == y.Count && x.Status < y.Status
		})
		return out, nil
	})
}
