package main

import (
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/spf13/cobra"

	"github.com/switchboard-voice/switchboard/outbox/outboxapi"
)

// portalLink is a minted magic link as the node answers it (nodeapi.PortalLink).
type portalLink struct {
	ID        string    `json:"id"`
	URL       string    `json:"url"`
	Path      string    `json:"path"`
	ExpiresAt time.Time `json:"expiresAt"`
	Endpoints []string  `json:"endpoints"`
}

// webhooksPortalCommand mints a consumer portal's magic link (docs/outbox.md §9).
func webhooksPortalCommand() webhooksCmd {
	var (
		endpoints []string
		ttl       time.Duration
		account   string
	)
	return webhooksCmd{use: "portal-link", short: "Mint a single-use magic link into the consumer portal of the account (or of chosen endpoints)",
		flags: func(cmd *cobra.Command) {
			cmd.Flags().StringArrayVar(&endpoints, "endpoint", nil, "confine the portal to this endpoint; repeatable (default every endpoint of the account)")
			cmd.Flags().DurationVar(&ttl, "ttl", 10*time.Minute, "how long the link opens the portal, used or not (1m to 24h)")
			cmd.Flags().StringVar(&account, "account", "", "the account's sid: needed with the admin token, found from the account's own token otherwise")
		},
		run: func(w *webhooksRun, _ []string) error {
			if ttl < time.Minute || ttl > 24*time.Hour || ttl%time.Second != 0 {
				return usageError("--ttl %s: want whole seconds from 1m to 24h", ttl)
			}
			if account == "" {
				me, _, err := outboxapi.Send(w.cmd.Context(), w.api, outboxapi.Call[struct {
					AccountSid string `json:"account_sid"`
				}]{Method: http.MethodGet, Path: "/v1/Me"})
				if err != nil {
					return apiFailure(w.c, w.f.asJSON, err)
				}
				account = me.AccountSid
			}
			body := map[string]any{"ttlSeconds": int(ttl.Seconds())}
			if len(endpoints) > 0 {
				body["endpoints"] = endpoints
			}
			call := outboxapi.Call[portalLink]{Method: http.MethodPost, Path: "/v1/Accounts/" + url.PathEscape(account) + "/PortalLinks", Body: body}
			return send(w, call, func(l portalLink) error {
				fmt.Fprintln(w.c.stdout, l.URL)
				scope := "every endpoint of the account"
				if len(l.Endpoints) > 0 {
					scope = fmt.Sprint(l.Endpoints)
				}
				fmt.Fprintf(w.c.stderr, "link %s opens one session, until %s, on %s\n", l.ID, l.ExpiresAt.UTC().Format(time.RFC3339), scope)
				return nil
			})
		}}
}
