package scenario

import (
	"fmt"
	"slices"
	"strings"

	"github.com/switchboard-voice/switchboard/callctl"
)

// Expectations are assertions about a finished call: a scenario's expect section.
type Expectations struct {
	// Verbs, when set, must equal the names of the verbs executed, in order.
	Verbs []string `yaml:"verbs"`
	// Hooks must all have been requested, in this order (other hooks may come
	// between them). HTTP hooks are named by URL path, WebSocket hooks by name.
	Hooks []string `yaml:"hooks"`
	// Status, when set, is the call's expected final status.
	Status callctl.Status `yaml:"status"`
	// Reason, when set, is why the call is expected to end (Result.Reason).
	Reason string `yaml:"reason"`
	// Alerts, when set, must each have been raised at least once.
	Alerts []callctl.AlertType `yaml:"alerts"`
}

// Set reports whether any expectation is given.
func (e Expectations) Set() bool {
	return e.Verbs != nil || e.Hooks != nil || e.Status != "" || e.Reason != "" || e.Alerts != nil
}

// ExpectFailure reports whether the expectations anticipate a call that fails
// (Result.Failed): they name its reason, or a final status other than completed. A
// completed call that lost its WebSocket, say, failed all the same.
func (e Expectations) ExpectFailure() bool {
	return e.Reason != "" || e.Status != "" && e.Status != callctl.StatusCompleted
}

// Check returns one message per expectation that does not hold for r.
func (e Expectations) Check(r *callctl.Result) []string {
	var failed []string
	if e.Verbs != nil && !slices.Equal(e.Verbs, r.Verbs) {
		failed = append(failed, fmt.Sprintf("verbs: got [%s], want [%s]", strings.Join(r.Verbs, " "), strings.Join(e.Verbs, " ")))
	}
	if e.Hooks != nil && !isSubsequence(e.Hooks, r.Hooks) {
		failed = append(failed, fmt.Sprintf("hooks: got [%s], want [%s] in this order", strings.Join(r.Hooks, " "), strings.Join(e.Hooks, " ")))
	}
	if e.Status != "" && e.Status != r.Status {
		failed = append(failed, fmt.Sprintf("status: got %s (%s), want %s", r.Status, r.Reason, e.Status))
	}
	if e.Reason != "" && e.Reason != r.Reason {
		failed = append(failed, fmt.Sprintf("reason: got %s, want %s", r.Reason, e.Reason))
	}
	for _, a := range e.Alerts {
		if !slices.ContainsFunc(r.Alerts, func(x callctl.Alert) bool { return x.Type == a }) {
			failed = append(failed, fmt.Sprintf("alerts: %s was not raised", a))
		}
	}
	return failed
}

func isSubsequence(want, got []string) bool {
	i := 0
	for _, g := range got {
		if i < len(want) && g == want[i] {
			i++
		}
	}
	return i == len(want)
}
