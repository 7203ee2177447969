package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/switchboard-voice/switchboard/outbox/outboxapi"
)

// endpointStatus is an endpoint's status, with why when it is paused.
func endpointStatus(ep outboxapi.WebhookEndpoint) string {
	if ep.PauseReason != nil {
		return ep.Status + " (" + *ep.PauseReason + ")"
	}
	return ep.Status
}

func (w *webhooksRun) printEndpoint(ep outboxapi.WebhookEndpoint) error {
	policy, err := json.Marshal(ep.Policy)
	if err != nil {
		return failure(err)
	}
	t := tabwriter.NewWriter(w.c.stdout, 0, 0, 2, ' ', 0)
	for _, kv := range [][2]string{
		{"id", ep.ID}, {"url", ep.URL}, {"events", strings.Join(ep.Events, ",")}, {"apiVersion", ep.APIVersion},
		{"profile", ep.Profile}, {"policy", string(policy)}, {"status", endpointStatus(ep)}, {"failures", strconv.Itoa(ep.Failures)},
		{"lastDeliveryAt", stamp(ep.LastDeliveryAt)}, {"pausedAt", stamp(ep.PausedAt)}, {"disabledAt", stamp(ep.DisabledAt)},
		{"holdUntil", stamp(ep.HoldUntil)}, {"channels", strings.Join(ep.Channels, ",")}, {"filter", filterText(ep.Filter)},
		{"rateLimit", rateText(ep.RateLimit)},
	} {
		fmt.Fprintf(t, "%s:\t%s\n", kv[0], kv[1])
	}
	for _, name := range slices.Sorted(maps.Keys(ep.Headers)) {
		fmt.Fprintf(t, "header:\t%s: %s\n", name, ep.Headers[name]) // masked by the API
	}
	return t.Flush()
}

func filterText(f json.RawMessage) string {
	if len(f) == 0 || string(f) == "null" {
		return "-"
	}
	return string(f)
}

func rateText(n *int) string {
	if n == nil {
		return "-"
	}
	return strconv.Itoa(*n) + "/s"
}

func (w *webhooksRun) printDelivery(what string) func(outboxapi.WebhookDelivery) error {
	return func(d outboxapi.WebhookDelivery) error {
		fmt.Fprintf(w.c.stdout, "%s: delivery %s (%s, event %s) %s\n", what, d.ID, d.Type, d.EventID, d.Status)
		return nil
	}
}

// table prints aligned columns.
type table struct {
	out io.Writer
	tw  *tabwriter.Writer
}

func newTable(out io.Writer, headers ...string) *table {
	t := &table{out: out, tw: tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)}
	t.row(headers...)
	return t
}

func (t *table) row(cells ...string) { fmt.Fprintln(t.tw, strings.Join(cells, "\t")) }

// flush prints the table, and how to read the next page when there is one.
func (t *table) flush(next *string) error {
	if err := t.tw.Flush(); err != nil {
		return err
	}
	if next != nil {
		fmt.Fprintf(t.out, "more: --cursor %s\n", *next)
	}
	return nil
}

// stamp prints a time in RFC 3339, or - when there is none.
func stamp(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

// oneLineOf shortens s for a table cell.
func oneLineOf(s *string, n int) string {
	if s == nil || *s == "" {
		return "-"
	}
	v := []rune(strings.Join(strings.Fields(*s), " "))
	if len(v) > n {
		v = append(v[:n-1], '…')
	}
	return string(v)
}
