package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/switchboard-voice/switchboard/outbox/outboxapi"
)

// webhooksChangeCommands publish events, change and remove endpoints and read the
// audit log: the API's writes beyond create, and its record of them.
func webhooksChangeCommands() []webhooksCmd {
	var (
		data, id, createdAt, endpoint string
		channels, idemKey             string
		set                           updateFlags
		reason                        string
		auditEndpoint                 string
		page                          outboxapi.Page
	)
	return []webhooksCmd{
		{use: "publish TYPE", short: "Publish an event to every endpoint that takes its type (or to --endpoint alone)", args: 1,
			flags: func(cmd *cobra.Command) {
				cmd.Flags().StringVar(&data, "data", "{}", "the event's JSON payload; @FILE reads a file, - reads stdin")
				cmd.Flags().StringVar(&id, "id", "", "the event's id: publishing it again with the same content sends nothing more (default generated)")
				cmd.Flags().StringVar(&createdAt, "created-at", "", "the event's time, RFC 3339 (default now)")
				cmd.Flags().StringVar(&endpoint, "endpoint", "", "deliver to this endpoint only, whatever events it takes")
				cmd.Flags().StringVar(&channels, "channels", "", "comma-separated channels: only endpoints that take one of them get it")
				cmd.Flags().StringVar(&idemKey, "idempotency-key", "", "sent as Idempotency-Key: the same key with the same body within 24 h answers the first event")
			},
			run: func(w *webhooksRun, args []string) error {
				raw, err := readData(w.c.stdin, data)
				if err != nil {
					return usageError("--data: %v", err)
				}
				req := outboxapi.PublishRequest{ID: id, Type: args[0], Data: raw, EndpointID: endpoint}
				if channels != "" {
					req.Channels = strings.Split(channels, ",")
				}
				if createdAt != "" {
					t, err := time.Parse(time.RFC3339Nano, createdAt)
					if err != nil {
						return usageError("--created-at %q: want an RFC 3339 time, e.g. 2026-05-01T10:00:00Z", createdAt)
					}
					req.CreatedAt = &t
				}
				call := outboxapi.PublishEvent(req)
				if idemKey != "" {
					call = call.WithIdempotencyKey(idemKey)
				}
				return send(w, call, func(p outboxapi.Published) error {
					what := "published"
					if p.Duplicate {
						what = "already published (nothing more sent)"
					}
					deliveries := "deliveries"
					if len(p.Deliveries) == 1 {
						deliveries = "delivery"
					}
					fmt.Fprintf(w.c.stdout, "%s %s (%s): %d %s\n", what, p.Event.ID, p.Event.Type, len(p.Deliveries), deliveries)
					if len(p.Deliveries) > 0 {
						t := newTable(w.c.stdout, "DELIVERY", "ENDPOINT", "STATUS")
						for _, d := range p.Deliveries {
							t.row(d.ID, d.EndpointID, d.Status)
						}
						return t.flush(nil)
					}
					return nil
				})
			}},
		{use: "update ID", short: "Change an endpoint: only the fields given change", args: 1,
			flags: set.register,
			run: func(w *webhooksRun, args []string) error {
				body, err := set.body(w.cmd)
				if err != nil {
					return err
				}
				call := outboxapi.UpdateWebhook(args[0], outboxapi.UpdateWebhookRequest{})
				call.Body = body // as the user wrote it: the API judges every field and names the one it refuses
				return send(w, call, w.printEndpoint)
			}},
		{use: "delete ID", short: "Remove an endpoint: its waiting deliveries are DROPPED, its log stays readable", args: 1,
			flags: func(cmd *cobra.Command) {
				cmd.Flags().StringVar(&reason, "reason", "", "why, for the audit log")
			},
			run: func(w *webhooksRun, args []string) error {
				return send(w, outboxapi.DeleteWebhook(args[0], reason), func(outboxapi.NoContent) error {
					fmt.Fprintf(w.c.stdout, "removed %s\n", args[0])
					return nil
				})
			}},
		{use: "audit", short: "Read the audit log, newest first: who changed which endpoint, when and why",
			flags: func(cmd *cobra.Command) {
				cmd.Flags().StringVar(&auditEndpoint, "endpoint", "", "only this endpoint's entries")
				cmd.Flags().IntVar(&page.Limit, "limit", 50, "at most this many (1-500)")
				cmd.Flags().StringVar(&page.Cursor, "cursor", "", "the next page: the cursor the previous one printed")
			},
			run: func(w *webhooksRun, _ []string) error {
				if err := checkLimit(page.Limit); err != nil {
					return err
				}
				return send(w, outboxapi.ListAudit(auditEndpoint, page), func(l outboxapi.AuditList) error {
					t := newTable(w.c.stdout, "AT", "ACTION", "ENDPOINT", "ACTOR", "REASON", "DETAIL")
					for _, e := range l.Data {
						detail := "-"
						switch {
						case e.DeliveryID != nil:
							detail = "delivery " + *e.DeliveryID
						case e.Count != nil:
							detail = strconv.Itoa(*e.Count) + " deliveries"
						}
						t.row(stamp(&e.At), e.Action, e.EndpointID, e.Actor, oneLineOf(e.Reason, 50), detail)
					}
					return t.flush(l.NextCursor)
				})
			}},
	}
}

// readData reads --data: JSON as given, @FILE, or - for stdin. What is not JSON is
// refused here, before anything is sent.
func readData(stdin io.Reader, v string) (json.RawMessage, error) {
	var raw []byte
	switch {
	case v == "-":
		b, err := io.ReadAll(io.LimitReader(stdin, maxData+1))
		if err != nil {
			return nil, fmt.Errorf("reading stdin: %w", err)
		}
		raw = b
	case strings.HasPrefix(v, "@"):
		f, err := os.Open(v[1:])
		if err != nil {
			return nil, err
		}
		defer f.Close()
		if raw, err = io.ReadAll(io.LimitReader(f, maxData+1)); err != nil {
			return nil, err
		}
	default:
		raw = []byte(v)
	}
	if len(raw) > maxData {
		return nil, fmt.Errorf("larger than %d KiB", maxData>>10)
	}
	raw = bytes.TrimSpace(raw)
	if !json.Valid(raw) {
		return nil, fmt.Errorf("not valid JSON")
	}
	return raw, nil
}

// maxData is the API's bound on an event's data.
const maxData = 256 << 10

// updateFlags are the fields `webhooks update` may change: a flag per field the API
// takes, and --field for any field by its JSON name (fields the API gained after
// this binary was built included), each sent only when given.
type updateFlags struct {
	url, events, apiVersion, profile, policy string
	headers, fields                          []string
	channels, filter                         string
	rateLimit                                int
}

func (u *updateFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&u.url, "endpoint-url", "", "the endpoint's new URL (--url is the node's)")
	fl.StringVar(&u.events, "events", "", `comma-separated event types it takes ("*" for every type)`)
	fl.StringVar(&u.apiVersion, "api-version", "", "rendered into every attempt's body")
	fl.StringVar(&u.profile, "profile", "", "sajn, digize, lucibook or standard")
	fl.StringVar(&u.policy, "policy", "", `overrides of the profile as JSON, replacing the current ones ('{}' clears them)`)
	fl.StringArrayVar(&u.headers, "header", nil, `set a header sent on every attempt, "Name: value"; "Name:" with no value removes it (repeatable); the others stay`)
	fl.StringVar(&u.channels, "channels", "", `comma-separated channels, replacing them ("" for none)`)
	fl.StringVar(&u.filter, "filter", "", `a JSON condition on an event's data, replacing the filter ('{}' removes it)`)
	fl.IntVar(&u.rateLimit, "rate-limit", 0, "deliveries started per second at most, across every node (0 removes the limit)")
	fl.StringArrayVar(&u.fields, "field", nil, `NAME=JSON: set the endpoint's field NAME (as the API names it) to a JSON value, e.g. --field 'rateLimit=5'; repeatable`)
}

// body is the PATCH body of the flags given; none given is a usage error, as is a
// field given twice or a value that is not JSON.
func (u *updateFlags) body(cmd *cobra.Command) (map[string]json.RawMessage, error) {
	body := map[string]json.RawMessage{}
	str := func(s string) json.RawMessage { b, _ := json.Marshal(s); return b }
	fl := cmd.Flags()
	if fl.Changed("endpoint-url") {
		body["url"] = str(u.url)
	}
	if fl.Changed("events") {
		var list []string
		for e := range strings.SplitSeq(u.events, ",") {
			if e = strings.TrimSpace(e); e != "" {
				list = append(list, e)
			}
		}
		if len(list) == 0 {
			list = []string{"*"}
		}
		b, _ := json.Marshal(list)
		body["events"] = b
	}
	if fl.Changed("api-version") {
		body["apiVersion"] = str(u.apiVersion)
	}
	if fl.Changed("profile") {
		body["profile"] = str(u.profile)
	}
	if fl.Changed("policy") {
		var doc map[string]json.RawMessage
		if err := json.Unmarshal([]byte(u.policy), &doc); err != nil {
			return nil, usageError("--policy: not a JSON object: %v", err)
		}
		body["policy"] = json.RawMessage(u.policy)
	}
	if len(u.headers) > 0 {
		headers := map[string]*string{}
		for _, h := range u.headers {
			name, value, ok := strings.Cut(h, ":")
			name, value = strings.TrimSpace(name), strings.TrimSpace(value)
			if !ok || name == "" {
				return nil, usageError(`--header %q: want "Name: value", or "Name:" to remove it`, h)
			}
			if value == "" {
				headers[name] = nil
			} else {
				headers[name] = &value
			}
		}
		b, _ := json.Marshal(headers)
		body["headers"] = b
	}
	if fl.Changed("channels") {
		list := []string{}
		for c := range strings.SplitSeq(u.channels, ",") {
			if c = strings.TrimSpace(c); c != "" {
				list = append(list, c)
			}
		}
		b, _ := json.Marshal(list)
		body["channels"] = b
	}
	if fl.Changed("filter") {
		if !json.Valid([]byte(u.filter)) {
			return nil, usageError("--filter: not JSON: %s", u.filter)
		}
		body["filter"] = json.RawMessage(u.filter)
	}
	if fl.Changed("rate-limit") {
		if u.rateLimit < 0 {
			return nil, usageError("--rate-limit %d: want 0 or more deliveries per second", u.rateLimit)
		}
		body["rateLimit"] = json.RawMessage(strconv.Itoa(u.rateLimit))
	}
	for _, f := range u.fields {
		name, value, ok := strings.Cut(f, "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			return nil, usageError("--field %q: want NAME=JSON", f)
		}
		if !json.Valid([]byte(value)) {
			return nil, usageError("--field %s: %q is not JSON (a string is quoted: %s='\"text\"')", name, value, name)
		}
		if _, dup := body[name]; dup {
			return nil, usageError("--field %s: %s is given twice", name, name)
		}
		body[name] = json.RawMessage(value)
	}
	if len(body) == 0 {
		return nil, usageError("nothing to change: give --endpoint-url, --events, --api-version, --profile, --policy, --header, --channels, --filter, --rate-limit or --field")
	}
	return body, nil
}
