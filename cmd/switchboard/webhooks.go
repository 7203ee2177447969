package main

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/switchboard-voice/switchboard/outbox/outboxapi"
)

// webhooksFlags are the flags every `webhooks` subcommand shares.
type webhooksFlags struct {
	url, token string
	asJSON     bool
}

// webhooksCmd is one subcommand: its use, help, argument count (-1: any) and what
// it does with the API client.
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
	api *outboxapi.Client
	f   *webhooksFlags
}

func newWebhooksCmd(c *cli) *cobra.Command {
	group := groupCommand("webhooks", "Manage webhook endpoints and read their delivery log through a node's API")
	group.Long = `Webhooks manages the account's webhook endpoints on a node (switchboard serve) through
its outbox API (/api/v1/...): list, create, show, update and delete endpoints, ping
them, publish events, read their delivery log with every attempt, follow it live (tail),
retry or recover deliveries, pause, resume, rotate secrets (or set one's own, whsec_ or
ed25519 whsk_), give endpoints headers, channels, a filter and a rate limit, keep the
event-type catalog (event-types), read the audit log, and mint consumer portal links
(portal-link). It authenticates with the account's API token.

The node is --url (default $` + envAPIURL + `), the token --token (default $` + envAPIToken + `).
--json prints the API's answer as one JSON object (a failed call prints its RFC 9457
problem document).

Exit status: 0 done, 1 the API refused or failed (not found, conflict, unavailable, no
answer), 2 bad usage or bad input (a flag, a rejected field, a bad token): nothing done.`
	for _, sc := range append(append(webhooksCommands(), webhooksChangeCommands()...), webhooksTailCommand(), webhooksPortalCommand()) {
		group.AddCommand(sc.command(c))
	}
	group.AddCommand(newEventTypesCmd(c))
	return group
}

func (sc webhooksCmd) command(c *cli) *cobra.Command {
	f := &webhooksFlags{}
	cmd := &cobra.Command{Use: sc.use, Short: sc.short, Args: exactArgs(sc.args)}
	if sc.args < 0 {
		cmd.Args = cobra.ArbitraryArgs
	}
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

// exactArgs wants n arguments, and says otherwise which the command takes, as its
// Use names them: cobra's own "accepts 2 arg(s), received 1" named neither the
// command nor its arguments.
func exactArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) == n {
			return nil
		}
		takes := "no arguments"
		if n > 0 {
			takes = strings.Join(strings.Fields(cmd.Use)[1:], " ")
		}
		got := fmt.Sprintf("%d arguments", len(args))
		if len(args) == 1 {
			got = "1 argument"
		}
		name := strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" ")
		return usageError("%s takes %s (got %s)", name, takes, got)
	}
}

// send makes one API call and prints its answer: the JSON as received with --json,
// else what human makes of it.
func send[T any](w *webhooksRun, call outboxapi.Call[T], human func(T) error) error {
	v, raw, err := outboxapi.Send(w.cmd.Context(), w.api, call)
	if err != nil {
		return apiFailure(w.c, w.f.asJSON, err)
	}
	if w.f.asJSON {
		if len(raw) == 0 {
			raw = json.RawMessage(`{}`)
		}
		fmt.Fprintln(w.c.stdout, string(raw))
		return nil
	}
	return human(v)
}

func webhooksCommands() []webhooksCmd {
	var (
		events, apiVersion, profile, policy string
		routing                             routingFlags
		page                                outboxapi.Page
		status, typ, eventID                string
		reason, since                       string
		grace                               time.Duration
	)
	paged := func(cmd *cobra.Command) {
		cmd.Flags().IntVar(&page.Limit, "limit", 50, "at most this many (1-500)")
		cmd.Flags().StringVar(&page.Cursor, "cursor", "", "the next page: the cursor the previous one printed")
	}
	withReason := func(cmd *cobra.Command) {
		cmd.Flags().StringVar(&reason, "reason", "", "why, for the audit log")
	}
	return []webhooksCmd{
		{use: "list", short: "List the account's endpoints with their health", flags: paged,
			run: func(w *webhooksRun, _ []string) error {
				if err := checkLimit(page.Limit); err != nil {
					return err
				}
				return send(w, outboxapi.ListWebhooks(page), func(p outboxapi.WebhookList) error {
					t := newTable(w.c.stdout, "ID", "STATUS", "FAILURES", "PROFILE", "URL", "EVENTS")
					for _, ep := range p.Data {
						t.row(ep.ID, endpointStatus(ep), strconv.Itoa(ep.Failures), ep.Profile, ep.URL, strings.Join(ep.Events, ","))
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
				cmd.Flags().StringVar(&routing.secret, "secret", "", "its signing key: a whsec_ secret, or a whsk_ ed25519 key (then its whpk_ public key is printed); default a new whsec_ secret")
				routing.bind(cmd)
			},
			run: func(w *webhooksRun, args []string) error {
				req := outboxapi.CreateWebhookRequest{URL: args[0], APIVersion: apiVersion, Profile: profile, Secret: routing.secret}
				if events != "" {
					req.Events = strings.Split(events, ",")
				}
				if err := routing.apply(&req); err != nil {
					return err
				}
				call := outboxapi.CreateWebhook(req)
				if policy != "" {
					var doc map[string]json.RawMessage
					if err := json.Unmarshal([]byte(policy), &doc); err != nil {
						return usageError("--policy: not a JSON object: %v", err)
					}
					// The policy goes as written: the API is its one judge, and names
					// the key it refuses.
					call.Body = struct {
						outboxapi.CreateWebhookRequest
						Policy json.RawMessage `json:"policy"`
					}{req, json.RawMessage(policy)}
				}
				return send(w, call, func(ep outboxapi.WebhookEndpointWithSecret) error {
					fmt.Fprintf(w.c.stdout, "created %s %s\n%s\n", ep.ID, ep.URL, verifyingKeyLine(ep.Secret))
					fmt.Fprintln(w.c.stderr, "the secret is shown this once: store it where the receiver verifies signatures")
					return nil
				})
			}},
		{use: "show ID", short: "Show an endpoint and its health", args: 1,
			run: func(w *webhooksRun, args []string) error {
				return send(w, outboxapi.GetWebhook(args[0]), w.printEndpoint)
			}},
		{use: "ping ID", short: "Send a settings.webhook.ping event to an endpoint, whatever events it takes", args: 1,
			run: func(w *webhooksRun, args []string) error {
				return send(w, outboxapi.PingWebhook(args[0]), w.printDelivery("ping queued"))
			}},
		{use: "deliveries ID", short: "List an endpoint's deliveries, newest first", args: 1,
			flags: func(cmd *cobra.Command) {
				paged(cmd)
				cmd.Flags().StringVar(&status, "status", "", "only PENDING, SUCCEEDED, FAILED, DEAD or DROPPED")
				cmd.Flags().StringVar(&typ, "type", "", "only deliveries of this event type")
				cmd.Flags().StringVar(&eventID, "event-id", "", "only the deliveries of this event")
			},
			run: func(w *webhooksRun, args []string) error {
				filter := outboxapi.DeliveryFilter{Page: page, Status: status, Type: typ, EventID: eventID}
				if err := checkLimit(page.Limit); err != nil {
					return err
				}
				return send(w, outboxapi.ListDeliveries(args[0], filter), func(p outboxapi.DeliveryList) error {
					t := newTable(w.c.stdout, "ID", "STATUS", "ATTEMPTS", "TYPE", "EVENT", "CREATED", "NEXT ATTEMPT")
					for _, d := range p.Data {
						t.row(d.ID, d.Status, strconv.Itoa(d.Attempts), d.Type, d.EventID, stamp(&d.CreatedAt), stamp(d.NextAttemptAt))
					}
					return t.flush(p.NextCursor)
				})
			}},
		{use: "attempts ID DELIVERY_ID", short: "Show one delivery with every attempt", args: 2,
			run: func(w *webhooksRun, args []string) error {
				return send(w, outboxapi.GetDelivery(args[0], args[1]), func(d outboxapi.WebhookDeliveryDetail) error {
					fmt.Fprintf(w.c.stdout, "delivery %s  %s  event %s (%s)  next attempt %s\n", d.ID, d.Status, d.EventID, d.Type, stamp(d.NextAttemptAt))
					t := newTable(w.c.stdout, "#", "AT", "STATUS", "OUTCOME", "DURATION", "ERROR", "RESPONSE")
					for _, a := range d.Attempts {
						t.row(strconv.Itoa(a.Number), stamp(&a.At), strconv.Itoa(a.Status), a.Outcome,
							strconv.FormatFloat(a.DurationMs, 'f', 1, 64)+"ms", oneLineOf(a.Error, 60), oneLineOf(a.ResponseBody, 60))
					}
					return t.flush(nil)
				})
			}},
		{use: "retry ID DELIVERY_ID", short: "Send a finished delivery again", args: 2, flags: withReason,
			run: func(w *webhooksRun, args []string) error {
				return send(w, outboxapi.RetryDelivery(args[0], args[1], reason), w.printDelivery("retry queued"))
			}},
		{use: "recover ID", short: "Send again every FAILED delivery of an endpoint since a time", args: 1,
			flags: func(cmd *cobra.Command) {
				withReason(cmd)
				cmd.Flags().StringVar(&since, "since", "", "an RFC 3339 time, or a duration ago such as 24h (default: all kept)")
			},
			run: func(w *webhooksRun, args []string) error {
				var from time.Time
				if since != "" {
					var err error
					if from, err = parseSince(since, time.Now()); err != nil {
						return usageError("--since %q: %v", since, err)
					}
				}
				return send(w, outboxapi.RecoverWebhook(args[0], from, reason), func(r outboxapi.Recovered) error {
					fmt.Fprintf(w.c.stdout, "recovered %d FAILED deliveries of %s\n", r.Recovered, args[0])
					return nil
				})
			}},
		{use: "pause ID", short: "Pause an endpoint (reason MANUAL)", args: 1, flags: withReason,
			run: func(w *webhooksRun, args []string) error {
				return send(w, outboxapi.PauseWebhook(args[0], reason), w.printEndpoint)
			}},
		{use: "resume ID", short: "Resume a paused endpoint; held deliveries are released", args: 1, flags: withReason,
			run: func(w *webhooksRun, args []string) error {
				return send(w, outboxapi.ResumeWebhook(args[0], reason), w.printEndpoint)
			}},
		{use: "rotate-secret ID", short: "Give an endpoint a new secret; the old one keeps signing for --grace", args: 1,
			flags: func(cmd *cobra.Command) {
				withReason(cmd)
				cmd.Flags().DurationVar(&grace, "grace", 0, "how long the old secret keeps signing beside the new one (default 24h, at most 168h)")
				cmd.Flags().StringVar(&routing.secret, "secret", "", "the new key: a whsec_ secret or a whsk_ ed25519 key (default a new key of the scheme the endpoint signs with)")
			},
			run: func(w *webhooksRun, args []string) error {
				if grace < 0 || grace > 7*24*time.Hour {
					return usageError("--grace %s: want 0 to 168h", grace)
				}
				return send(w, outboxapi.RotateWebhookSecretTo(args[0], grace, reason, routing.secret), func(ep outboxapi.WebhookEndpointWithSecret) error {
					fmt.Fprintf(w.c.stdout, "rotated %s\n%s\n", ep.ID, verifyingKeyLine(ep.Secret))
					fmt.Fprintln(w.c.stderr, "the old secret keeps signing beside it for the grace period; the new one is shown this once")
					return nil
				})
			}},
	}
}

// checkLimit refuses a --limit the API would not take (0 would be its default, not
// what was asked).
func checkLimit(n int) error {
	if n < 1 || n > 500 {
		return usageError("--limit %d: want 1 to 500", n)
	}
	return nil
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

// routingFlags are the flags of an endpoint's headers, channels, filter and rate
// limit (docs/outbox.md §1), and its secret.
type routingFlags struct {
	headers   []string
	channels  string
	filter    string
	rateLimit int
	secret    string
}

func (f *routingFlags) bind(cmd *cobra.Command) {
	cmd.Flags().StringArrayVar(&f.headers, "header", nil, `a header sent on every attempt, "Name: value" (repeatable), e.g. --header "Authorization: Bearer $TOKEN"`)
	cmd.Flags().StringVar(&f.channels, "channels", "", "comma-separated channels: it takes only the events of one of them")
	cmd.Flags().StringVar(&f.filter, "filter", "", `a JSON condition on an event's data, e.g. '{"amount":{"$gte":100}}' (docs/outbox.md §1)`)
	cmd.Flags().IntVar(&f.rateLimit, "rate-limit", 0, "deliveries started per second at most, across every node (0: none)")
}

// apply puts the flags given into req; a malformed one is a usage error. What is
// well formed goes as written: the API judges it, and names what it refuses.
func (f *routingFlags) apply(req *outboxapi.CreateWebhookRequest) error {
	for _, h := range f.headers {
		name, value, ok := strings.Cut(h, ":")
		if !ok || strings.TrimSpace(name) == "" {
			return usageError(`--header %q: want "Name: value"`, h)
		}
		if req.Headers == nil {
			req.Headers = map[string]string{}
		}
		req.Headers[strings.TrimSpace(name)] = strings.TrimSpace(value)
	}
	if f.channels != "" {
		req.Channels = strings.Split(f.channels, ",")
	}
	if f.filter != "" {
		if !json.Valid([]byte(f.filter)) {
			return usageError("--filter: not JSON: %s", f.filter)
		}
		req.Filter = json.RawMessage(f.filter)
	}
	if f.rateLimit < 0 {
		return usageError("--rate-limit %d: want 0 or more deliveries per second", f.rateLimit)
	}
	req.RateLimit = f.rateLimit
	return nil
}

// verifyingKeyLine names what a receiver verifies with: a whsec_ secret, or the
// whpk_ public key of an ed25519 endpoint.
func verifyingKeyLine(key string) string {
	if strings.HasPrefix(key, "whpk_") {
		return "public key: " + key
	}
	return "secret: " + key
}
