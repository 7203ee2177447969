package nodeapi

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore"
)

type listAlertsInput struct {
	AccountParams
	Type  string    `query:"type" enum:"webhook-connection-failure,webhook-failure,invalid-app-payload" doc:"Only alerts of this type"`
	Since time.Time `query:"since" doc:"Only alerts at or after this time (RFC 3339)"`
	Limit int       `query:"limit" minimum:"1" maximum:"1000" default:"500"`
}

type listAlertsOutput struct {
	Body []nodestore.Alert
}

func (a *API) registerAlerts(api huma.API) {
	registerForAccount(a, api, huma.Operation{
		OperationID: "list-alerts", Method: http.MethodGet, Path: "/v1/Accounts/{account}/Alerts",
		Summary: "List the account's alerts, oldest first",
	}, func(ctx context.Context, acct nodestore.Account, in *listAlertsInput) (*listAlertsOutput, error) {
		alerts, err := a.store.ListAlerts(ctx, nodestore.ListAlertsParams{AccountSid: acct.Sid, Type: in.Type, Since: in.Since, Limit: in.Limit})
		if err != nil {
			return nil, a.internal(err)
		}
		if alerts == nil {
			alerts = []nodestore.Alert{} // an empty list, never null
		}
		return &listAlertsOutput{Body: alerts}, nil
	})
}
