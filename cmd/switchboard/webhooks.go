package main

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// webhooksFlags are the flags every `webhooks` subcommand shares.
type webhooksFlags struct {
	url, token string
	asJSON     bool
}

// webhooksCmd is one subcommand: its use, help, argument count and what it does
// with the API client.
type webhooksCmd struct {
	use, short string
	args       int
	flags      func(cmd *cobra.Command)
	run        func(w *webhooksRun, args []string) error
}

// webhooksRun is what a subcommand's run has: the process, the client, the flags.
type webhooksRun struct {
	c   *cli
	cmd *cobra.Command
	api *apiClient
	f   *webhooksFlags
}

func newWebhooksCmd(c *cli) *cobra.Command {
	group := groupCommand("webhooks", "Manage webhook endpoints and read their delivery log through a node's API")
	group.Long = `Webhooks manages the account's webhook endpoints on a node (switchboard serve) through
its outbox API (/api/v1/...): list, create and show endpoints, ping them, read their
delivery log with every attempt, retry or recover deliveries, pause, resume, rotate
secrets. It authenticates with the account's API token.

The node is --url (default $` + envAPIURL + `), the token --token (default $` + envAPIToken + `).
--json prints the API's answer as one JSON object (a failed call prints its RFC 9457
problem document).

Exit status: 0 done, 1 the API refused or failed (not found, conflict, unavailable, no
answer), 2 bad usage or bad input (a flag, a rejected field, a bad token): nothing done.`
	for _, sc := range webhooksCommands() {
		group.AddCommand(sc.command(c))
	}
	return group
}

func (sc webhooksCmd) command(c *cli) *cobra.Command {
	f := &webhooksFlags{}
	cmd := &cobra.Command{Use: sc.use, Short: sc.short, Args: cobra.ExactArgs(sc.args)}
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		api, err := newAPIClient(c, f.url, f.token)
		if err != nil {
			return err
		}
		return sc.run(&webhooksRun{c: c, cmd: cmd, api: api, f: f}, args)
	}
	fl := cmd.Flags()
	fl.StringVar(&f.url, "url", "", "the node's API, e.g. http://127.0.0.1:8080 [$"+envAPIURL+"]")
	fl.StringVar(&f.token, "token", "", "the account's API token [$"+envAPIToken+"]")
	fl.BoolVar(&f.asJSON, "json", false, "print the API's answer as one JSON object")
	if sc.flags != nil {
		sc.flags(cmd)
	}
	return cmd
}

// call makes one API call and prints its answer: the JSON as received with --json,
// else human (given the answer decoded).
func (w *webhooksRun) call(method, path string, q url.Values, body any, human func(raw json.RawMessage) error) error {
	var raw json.RawMessage
	if err := w.api.do(w.cmd.Context(), method, path, q, body, &raw); err != nil {
		return apiFailure(w.c, w.f.asJSON, err)
	}
	if w.f.asJSON {
		if len(raw) == 0 {
			raw = json.RawMessage(`{}`)
		}
		fmt.Fprintln(w.c.stdout, string(raw))
		return nil
	}
	return human(raw)
}

func webhooksCommands() []webhooksCmd {
	var (
		events, apiVersion, profile, policy string
		limit                               int
		cursor, status, typ, eventID        string
		reason, since                       string
		grace                               time.Duration
	)
	page := func(cmd *cobra.Command) {
		cmd.Flags().IntVar(&limit, "limit", 50, "at most this many (1-500)")
		cmd.Flags().StringVar(&cursor, "cursor", "", "the next page: the cursor the previous one printed")
	}
	withReason := func(cmd *cobra.Command) {
		cmd.Flags().StringVar(&reason, "reason", "", "why, for the audit log")
	}
	pageQuery := func() url.Values {
		q := url.Values{"limit": {strconv.Itoa(limit)}}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		return q
	}
	reasonQuery := func() url.Values {
		q := url.Values{}
		if reason != "" {
			q.Set("reason", reason)
		}
		return q
	}
	return []webhooksCmd{
		{use: "list", short: "List the account's endpoints with their health", flags: page,
			run: func(w *webhooksRun, _ []string) error {
				return w.call("GET", "/api/v1/webhooks", pageQuery(), nil, func(raw json.RawMessage) error {
					var p struct {
						Data       []endpointView `json:"data"`
						NextCursor *string        `json:"nextCursor"`
					}
					if err := json.Unmarshal(raw, &p); err != nil {
						return failure(err)
					}
					t := newTable(w.c.stdout, "ID", "STATUS", "FAILURES", "PROFILE", "URL", "EVENTS")
					for _, ep := range p.Data {
						t.row(ep.ID, ep.status(), strconv.Itoa(ep.Failures), ep.Profile, ep.URL, strings.Join(ep.Events, ","))
					}
					return t.flush(p.NextCursor)
				})
			}},
		{use: "create URL", short: "Create an endpoint; prints its secret, once", args: 1,
			flags: func(cmd *cobra.Command) {
				cmd.Flags().StringVar(&events, "events", "", "comma-separated event types it takes (default every type)")
				cmd.Flags().StringVar(&apiVersion, "api-version", "", "rendered into every attempt's body")
				cmd.Flags().StringVar(&profile, "profile", "", "sajn, digize, lucibook or standard (default)")
				cmd.Flags().StringVar(&policy, "policy", "", `overrides of the profile as JSON, e.g. '{"scheduleSeconds":[1,1],"allowHttp":true}'`)
			},
			run: func(w *webhooksRun, args []string) error {
				body := map[string]any{"url": args[0]}
				if events != "" {
					body["events"] = strings.Split(events, ",")
				}
				if apiVersion != "" {
					body["apiVersion"] = apiVersion
				}
				if profile != "" {
					body["profile"] = profile
				}
				if policy != "" {
					var p map[string]any
					if err := json.Unmarshal([]byte(policy), &p); err != nil {
						return usageError("--policy: not a JSON object: %v", err)
					}
					body["policy"] = p
				}
				return w.call("POST", "/api/v1/webhooks", nil, body, func(raw json.RawMessage) error {
					var ep endpointView
					if err := json.Unmarshal(raw, &ep); err != nil {
						return failure(err)
					}
					fmt.Fprintf(w.c.stdout, "created %s %s\nsecret: %s\n", ep.ID, ep.URL, ep.Secret)
					fmt.Fprintln(w.c.stderr, "the secret is shown this once: store it where the receiver verifies signatures")
					return nil
				})
			}},
		{use: "show ID", short: "Show an endpoint and its health", args: 1,
			run: func(w *webhooksRun, args []string) error {
				return w.call("GET", "/api/v1/webhooks/"+url.PathEscape(args[0]), nil, nil, w.printEndpoint)
			}},
		{use: "ping ID", short: "Send a settings.webhook.ping event to an endpoint, whatever events it takes", args: 1,
			run: func(w *webhooksRun, args []string) error {
				return w.call("POST", "/api/v1/webhooks/"+url.PathEscape(args[0])+"/ping", nil, nil, w.printDelivery("ping queued"))
			}},
		{use: "deliveries ID", short: "List an endpoint's deliveries, newest first", args: 1,
			flags: func(cmd *cobra.Command) {
				page(cmd)
				cmd.Flags().StringVar(&status, "status", "", "only PENDING, SUCCEEDED, FAILED, DEAD or DROPPED")
				cmd.Flags().StringVar(&typ, "type", "", "only deliveries of this event type")
				cmd.Flags().StringVar(&eventID, "event-id", "", "only the deliveries of this event")
			},
			run: func(w *webhooksRun, args []string) error {
				q := pageQuery()
				for k, v := range map[string]string{"status": status, "type": typ, "eventId": eventID} {
					if v != "" {
						q.Set(k, v)
					}
				}
				return w.call("GET", "/api/v1/webhooks/"+url.PathEscape(args[0])+"/deliveries", q, nil, func(raw json.RawMessage) error {
					var p struct {
						Data       []deliveryView `json:"data"`
						NextCursor *string        `json:"nextCursor"`
					}
					if err := json.Unmarshal(raw, &p); err != nil {
						return failure(err)
					}
					t := newTable(w.c.stdout, "ID", "STATUS", "ATTEMPTS", "TYPE", "EVENT", "CREATED", "NEXT ATTEMPT")
					for _, d := range p.Data {
						t.row(d.ID, d.Status, strconv.Itoa(d.attemptCount()), d.Type, d.EventID, stamp(&d.CreatedAt), stamp(d.NextAttemptAt))
					}
					return t.flush(p.NextCursor)
				})
			}},
		{use: "attempts ID DELIVERY_ID", short: "Show one delivery with every attempt", args: 2,
			run: func(w *webhooksRun, args []string) error {
				path := "/api/v1/webhooks/" + url.PathEscape(args[0]) + "/deliveries/" + url.PathEscape(args[1])
				return w.call("GET", path, nil, nil, func(raw json.RawMessage) error {
					var d deliveryView
					if err := json.Unmarshal(raw, &d); err != nil {
						return failure(err)
					}
					fmt.Fprintf(w.c.stdout, "delivery %s  %s  event %s (%s)  next attempt %s\n", d.ID, d.Status, d.EventID, d.Type, stamp(d.NextAttemptAt))
					t := newTable(w.c.stdout, "#", "AT", "STATUS", "OUTCOME", "DURATION", "ERROR", "RESPONSE")
					for _, a := range d.AttemptList {
						t.row(strconv.Itoa(a.Number), stamp(&a.At), strconv.Itoa(a.Status), a.Outcome,
							strconv.FormatFloat(a.DurationMs, 'f', 1, 64)+"ms", oneLineOf(a.Error, 60), oneLineOf(a.ResponseBody, 60))
					}
					return t.flush(nil)
				})
			}},
		{use: "retry ID DELIVERY_ID", short: "Send a finished delivery again", args: 2, flags: withReason,
			run: func(w *webhooksRun, args []string) error {
				path := "/api/v1/webhooks/" + url.PathEscape(args[0]) + "/deliveries/" + url.PathEscape(args[1]) + "/retry"
				return w.call("POST", path, reasonQuery(), nil, w.printDelivery("retry queued"))
			}},
		{use: "recover ID", short: "Send again every FAILED delivery of an endpoint since a time", args: 1,
			flags: func(cmd *cobra.Command) {
				withReason(cmd)
				cmd.Flags().StringVar(&since, "since", "", "an RFC 3339 time, or a duration ago such as 24h (default: all kept)")
			},
			run: func(w *webhooksRun, args []string) error {
				q := reasonQuery()
				if since != "" {
					t, err := parseSince(since, time.Now())
					if err != nil {
						return usageError("--since %q: %v", since, err)
					}
					q.Set("since", t.Format(time.RFC3339))
				}
				return w.call("POST", "/api/v1/webhooks/"+url.PathEscape(args[0])+"/recover", q, nil, func(raw json.RawMessage) error {
					var r struct {
						Recovered int `json:"recovered"`
					}
					if err := json.Unmarshal(raw, &r); err != nil {
						return failure(err)
					}
					fmt.Fprintf(w.c.stdout, "recovered %d FAILED deliveries of %s\n", r.Recovered, args[0])
					return nil
				})
			}},
		{use: "pause ID", short: "Pause an endpoint (reason MANUAL)", args: 1, flags: withReason,
			run: func(w *webhooksRun, args []string) error {
				return w.call("POST", "/api/v1/webhooks/"+url.PathEscape(args[0])+"/pause", reasonQuery(), nil, w.printEndpoint)
			}},
		{use: "resume ID", short: "Resume a paused endpoint; held deliveries are released", args: 1, flags: withReason,
			run: func(w *webhooksRun, args []string) error {
				return w.call("POST", "/api/v1/webhooks/"+url.PathEscape(args[0])+"/resume", reasonQuery(), nil, w.printEndpoint)
			}},
		{use: "rotate-secret ID", short: "Give an endpoint a new secret; the old one keeps signing for --grace", args: 1,
			flags: func(cmd *cobra.Command) {
				withReason(cmd)
				cmd.Flags().DurationVar(&grace, "grace", 0, "how long the old secret keeps signing beside the new one (default 24h, at most 168h)")
			},
			run: func(w *webhooksRun, args []string) error {
				q := reasonQuery()
				if grace < 0 || grace > 7*24*time.Hour {
					return usageError("--grace %s: want 0 to 168h", grace)
				}
				if grace > 0 {
					q.Set("graceSeconds", strconv.Itoa(int(grace.Seconds())))
				}
				return w.call("POST", "/api/v1/webhooks/"+url.PathEscape(args[0])+"/rotate-secret", q, nil, func(raw json.RawMessage) error {
					var ep endpointView
					if err := json.Unmarshal(raw, &ep); err != nil {
						return failure(err)
					}
					fmt.Fprintf(w.c.stdout, "rotated %s\nsecret: %s\n", ep.ID, ep.Secret)
					fmt.Fprintln(w.c.stderr, "the old secret keeps signing beside it for the grace period; the new one is shown this once")
					return nil
				})
			}},
	}
}

// parseSince reads an RFC 3339 time, or a duration before now.
func parseSince(s string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return time.Time{}, fmt.Errorf("want an RFC 3339 time or a duration ago such as 24h")
	}
	return now.Add(-d).UTC().Truncate(time.Second), nil
}
