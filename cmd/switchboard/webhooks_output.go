package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// endpointView is an endpoint as the API answers it, for human output.
type endpointView struct {
	ID             string          `json:"id"`
	URL            string          `json:"url"`
	Events         []string        `json:"events"`
	APIVersion     string          `json:"apiVersion"`
	Profile        string          `json:"profile"`
	Policy         json.RawMessage `json:"policy"`
	Status         string          `json:"status"`
	Failures       int             `json:"failures"`
	LastDeliveryAt *time.Time      `json:"lastDeliveryAt"`
	PausedAt       *time.Time      `json:"pausedAt"`
	PauseReason    *string         `json:"pauseReason"`
	DisabledAt     *time.Time      `json:"disabledAt"`
	HoldUntil      *time.Time      `json:"holdUntil"`
	Secret         string          `json:"secret"`
}

func (ep endpointView) status() string {
	if ep.PauseReason != nil {
		return ep.Status + " (" + *ep.PauseReason + ")"
	}
	return ep.Status
}

// deliveryView is a delivery, listed (attempts a count) or read alone (attempts a
// list).
type deliveryView struct {
	ID            string          `json:"id"`
	EventID       string          `json:"eventId"`
	EndpointID    string          `json:"endpointId"`
	Type          string          `json:"type"`
	Status        string          `json:"status"`
	Attempts      json.RawMessage `json:"attempts"`
	NextAttemptAt *time.Time      `json:"nextAttemptAt"`
	CreatedAt     time.Time       `json:"createdAt"`
	AttemptList   []attemptView   `json:"-"`
}

type attemptView struct {
	Number       int       `json:"number"`
	At           time.Time `json:"at"`
	DurationMs   float64   `json:"durationMs"`
	Status       int       `json:"status"`
	Outcome      string    `json:"outcome"`
	Error        *string   `json:"error"`
	ResponseBody *string   `json:"responseBody"`
}

func (d *deliveryView) UnmarshalJSON(b []byte) error {
	type plain deliveryView
	if err := json.Unmarshal(b, (*plain)(d)); err != nil {
		return err
	}
	if len(d.Attempts) > 0 && d.Attempts[0] == '[' {
		return json.Unmarshal(d.Attempts, &d.AttemptList)
	}
	return nil
}

func (d deliveryView) attemptCount() int {
	n, _ := strconv.Atoi(string(d.Attempts))
	return n
}

func (w *webhooksRun) printEndpoint(raw json.RawMessage) error {
	var ep endpointView
	if err := json.Unmarshal(raw, &ep); err != nil {
		return failure(err)
	}
	t := tabwriter.NewWriter(w.c.stdout, 0, 0, 2, ' ', 0)
	for _, kv := range [][2]string{
		{"id", ep.ID}, {"url", ep.URL}, {"events", strings.Join(ep.Events, ",")}, {"apiVersion", ep.APIVersion},
		{"profile", ep.Profile}, {"policy", string(ep.Policy)}, {"status", ep.status()}, {"failures", strconv.Itoa(ep.Failures)},
		{"lastDeliveryAt", stamp(ep.LastDeliveryAt)}, {"pausedAt", stamp(ep.PausedAt)}, {"disabledAt", stamp(ep.DisabledAt)},
		{"holdUntil", stamp(ep.HoldUntil)},
	} {
		fmt.Fprintf(t, "%s:\t%s\n", kv[0], kv[1])
	}
	return t.Flush()
}

func (w *webhooksRun) printDelivery(what string) func(json.RawMessage) error {
	return func(raw json.RawMessage) error {
		var d deliveryView
		if err := json.Unmarshal(raw, &d); err != nil {
			return failure(err)
		}
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
