package simulation

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/rs/zerolog"

	"github.com/switchboard-voice/switchboard/callctl"
	"github.com/switchboard-voice/switchboard/callctl/scenario"
	"github.com/switchboard-voice/switchboard/featureserver"
	"github.com/switchboard-voice/switchboard/transport"
)

// EgressHint ends the alert of a destination the egress rules refused.
const EgressHint = "allow it with " + featureserver.EnvEgressAllow

// ErrInterrupted is wrapped by Run's error when ctx ended before every call did.
var ErrInterrupted = errors.New("interrupted")

// Network is the network of the calls of one `simulate` or `test` run: the
// JAMBONES_* settings getenv gives, the call-control egress rules with loopback
// allowed (a developer's app runs there) and SWITCHBOARD_EGRESS_ALLOW, and a pool
// with room for the calls made at once, so that their connections are reused. An
// error names the variable at fault.
func Network(getenv func(string) string, concurrency int, log zerolog.Logger) (*featureserver.CallNetwork, error) {
	cfg, err := featureserver.LoadCallControlConfig(getenv)
	if err != nil {
		return nil, err
	}
	// Only the allow-list of the node's own settings applies to a simulation.
	node, err := featureserver.LoadConfig(func(name string) string {
		if name == featureserver.EnvEgressAllow {
			return getenv(name)
		}
		return ""
	}, nil)
	if err != nil {
		return nil, err
	}
	rules := transport.CallControlRules(true)
	rules.AllowPrefixes, rules.AllowHosts = node.EgressAllow.Prefixes, node.EgressAllow.Hosts
	cfg.IdleConnsPerHost = max(concurrency, 4)
	return featureserver.NewCallNetwork(cfg, rules, log), nil
}

// Options are a simulation's: what `simulate`'s flags and scenario file say.
type Options struct {
	AppURL             string
	Scenario           *scenario.Scenario // nil: no scenario
	From, To           string             // default the scenario's, else callctl's
	Secret             string             // signs HTTP hooks with Jambonz-Signature
	StatusHook         string             // default the scenario's
	Username, Password string
	Calls, Concurrency int
	Timeout            time.Duration // real-time limit of each call
	IdleLimit          time.Duration
	RealTime           bool
	Strict             bool      // a compat warning the scenario does not name fails the call
	JSON               bool      // print JSON lines instead of text
	Progress           io.Writer // a terminal to draw a progress bar on; nil for none
}

// Simulation is everything the calls of one `simulate` share.
type Simulation struct {
	o      Options
	base   callctl.Options
	expect scenario.Expectations
	out    *timelineWriter
}

// New prepares the calls of o on net, printing to w. An error is bad usage: the
// call's options do not validate.
func New(o Options, net *featureserver.CallNetwork, w io.Writer) (*Simulation, error) {
	sc := o.Scenario
	if sc == nil {
		sc = &scenario.Scenario{}
	}
	base := net.CallOptions(o.AppURL)
	base.StatusHookURL, base.Username, base.Password, base.Secret = firstNonEmpty(o.StatusHook, sc.StatusHook), o.Username, o.Password, o.Secret
	base.Call = callctl.CallInfo{From: firstNonEmpty(o.From, sc.From), To: firstNonEmpty(o.To, sc.To), EnvVars: sc.EnvVars}
	base.QueueEventHookURL = sc.QueueEventHook
	base.Script = sc.Script()
	base.IdleLimit = o.IdleLimit
	base.RealTime = o.RealTime
	base.EgressHint = EgressHint
	if err := base.Validate(); err != nil {
		return nil, err
	}
	return &Simulation{o: o, expect: sc.Expectations(), base: base,
		out: &timelineWriter{w: w, json: o.JSON, live: o.Calls == 1}}, nil
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// CallOptions are the options of each call (OnEvent unset).
func (s *Simulation) CallOptions() callctl.Options { return s.base }

// Run places the calls, prints their timelines and the summary. Its error says why
// the run did not succeed: ctx ended (ErrInterrupted), or calls did not end as
// expected.
func (s *Simulation) Run(ctx context.Context) error {
	bar := newProgress(s.o.Progress, s.o.Calls)
	sum := newSummary()
	InParallel(ctx, s.o.Calls, s.o.Concurrency, func(int) {
		r := s.one(ctx)
		failures, asExpected := s.Check(r)
		s.out.finished(r, failures, asExpected)
		sum.add(r, failures, asExpected)
		bar.add()
	})
	sum.finish()
	bar.finish()
	s.out.summary(sum)
	if ctx.Err() != nil {
		return fmt.Errorf("%w: %w", ErrInterrupted, ctx.Err())
	}
	if sum.unexpected > 0 {
		return fmt.Errorf("%d of %d call(s) did not end as expected", sum.unexpected, sum.calls)
	}
	return nil
}

// one runs one call under the real-time limit.
func (s *Simulation) one(ctx context.Context) *callctl.Result {
	ctx, cancel := context.WithTimeout(ctx, s.o.Timeout)
	defer cancel()
	o := s.base
	o.OnEvent = s.out.event
	r, err := callctl.Run(ctx, o)
	if err != nil { // validated by New: cannot happen
		panic(err)
	}
	return r
}

// Check applies the expectations. A call ended as expected when every expectation
// holds and the call did not fail, unless the scenario expects it to (a reason, or a
// final status other than completed).
func (s *Simulation) Check(r *callctl.Result) (failures []string, asExpected bool) {
	failures = s.expect.Check(r)
	if s.o.Strict {
		for _, f := range s.expect.Strict(r) {
			failures = append(failures, f.Message)
		}
	}
	return failures, len(failures) == 0 && (!r.Failed() || s.expect.ExpectFailure())
}
