package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/switchboard-voice/switchboard/featureserver"
)

// Every setting a command takes from the environment has a typed flag of the same
// meaning that wins over it, in one style across commands: durations are durations
// with their unit (1500ms, 10s, 5m; a bare number is refused, since --drain-timeout 5
// would be 5 ms to one reader and 5 s to another; 0 needs none), counts are integers.
// The -ms spellings of earlier releases stay accepted, hidden, and take a bare number
// of milliseconds as their name says.

// flagKind says how a flag is typed and how its value goes into its variable.
type flagKind int

const (
	kindString   flagKind = iota
	kindInt               // an integer, as is
	kindDuration          // a duration; the variable holds milliseconds
	kindHours             // a duration of whole hours; the variable holds hours
)

// envFlag is one flag standing for the variable env.
type envFlag struct {
	name, env, usage string
	kind             flagKind
	// legacy is an earlier name of the flag, still accepted: deprecated and hidden.
	legacy string
}

// callControlFlags are the JAMBONES_* settings: serve, simulate and test take them.
var callControlFlags = []envFlag{
	{name: "http-timeout", env: "JAMBONES_HTTP_TIMEOUT", usage: "HTTP hook timeout, connect + response headers (default 10s)", kind: kindDuration, legacy: "http-timeout-ms"},
	{name: "http-user-agent", env: "JAMBONES_HTTP_USER_AGENT_HEADER", usage: "User-Agent of hooks and WebSocket upgrades (default jambonz)"},
	{name: "ws-handshake-timeout", env: "JAMBONES_WS_HANDSHAKE_TIMEOUT_MS", usage: "WebSocket opening handshake timeout (default 1.5s)", kind: kindDuration, legacy: "ws-handshake-timeout-ms"},
	{name: "ws-ack-timeout", env: "JAMBONES_WS_API_MSG_RESPONSE_TIMEOUT", usage: "wait for a WebSocket ack (default 5s)", kind: kindDuration, legacy: "ws-ack-timeout-ms"},
	{name: "ws-max-payload", env: "JAMBONES_WS_MAX_PAYLOAD", usage: "largest inbound WebSocket message in bytes (default 24576)", kind: kindInt},
	{name: "ws-ping-interval", env: "JAMBONES_WS_PING_INTERVAL_MS", usage: "WebSocket keepalive ping interval, 0 = off (default 0)", kind: kindDuration, legacy: "ws-ping-interval-ms"},
	{name: "webhook-error-return", env: "JAMBONES_WEBHOOK_ERROR_RETURN", usage: "SIP status when the initial hook fails (default 480)", kind: kindInt},
}

// durationValue is a duration flag. Only a -ms spelling (ms) also takes a bare
// number, of milliseconds.
type durationValue struct {
	d  *time.Duration
	ms bool
}

// String is "" for zero, so that help shows no "(default 0s)": a flag's default
// is its variable's, stated in its usage.
func (v durationValue) String() string {
	if v.d == nil || *v.d == 0 {
		return ""
	}
	return v.d.String()
}

func (v durationValue) Set(s string) error {
	s = strings.TrimSpace(s)
	if n, err := strconv.ParseInt(s, 10, 64); err == nil && n != 0 {
		if !v.ms {
			return fmt.Errorf("a duration needs its unit: %[1]ss, %[1]sms or %[1]sm", s)
		}
		*v.d = time.Duration(n) * time.Millisecond
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return errors.New("want a duration such as 1500ms, 10s or 5m (with its unit)")
	}
	*v.d = d
	return nil
}

func (v durationValue) Type() string { return "duration" }

// envFlags are flags registered on one flag set.
type envFlags struct {
	fs    *pflag.FlagSet
	flags []envFlag
	durs  map[string]*time.Duration
}

// withCallControlFlags registers the JAMBONES_* flags of call control on cmd, and
// makes its RunE read them, the given ones into *given, before it runs run: the
// flags simulate and test share.
func withCallControlFlags(c *cli, cmd *cobra.Command, given *map[string]string, run func(cmd *cobra.Command, args []string) error) {
	flags := addEnvFlags(cmd.Flags(), callControlFlags)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		var err error
		if *given, err = flags.load(c.getenv); err != nil {
			return err
		}
		return run(cmd, args)
	}
}

// addEnvFlags registers flags on fs, each with its variable in its usage.
func addEnvFlags(fs *pflag.FlagSet, flags []envFlag) *envFlags {
	e := &envFlags{fs: fs, flags: flags, durs: map[string]*time.Duration{}}
	for _, f := range flags {
		usage := f.usage + " [" + f.env + "]"
		switch f.kind {
		case kindDuration, kindHours:
			d := new(time.Duration)
			e.durs[f.name] = d
			fs.Var(durationValue{d: d}, f.name, usage)
			if f.legacy != "" {
				fs.Var(durationValue{d: d, ms: true}, f.legacy, "same as --"+f.name+", in milliseconds")
			}
		case kindInt:
			fs.Int64(f.name, 0, usage)
			if f.legacy != "" {
				fs.Int64(f.legacy, 0, "same as --"+f.name)
			}
		default:
			fs.String(f.name, "", usage)
		}
		if f.legacy != "" {
			_ = fs.MarkHidden(f.legacy)
		}
	}
	return e
}

// given is the name under which flag f was given, "" when it was not.
func (e *envFlags) given(f envFlag) string {
	switch {
	case e.fs.Changed(f.name):
		return f.name
	case f.legacy != "" && e.fs.Changed(f.legacy):
		return f.legacy
	}
	return ""
}

// overrides maps the variable of each flag given to the flag's value as the
// variable writes it; a duration that the variable cannot hold is a usage error
// naming the flag.
func (e *envFlags) overrides(into map[string]string) error {
	for _, f := range e.flags {
		name := e.given(f)
		if name == "" {
			continue
		}
		switch f.kind {
		case kindDuration:
			d := *e.durs[f.name]
			if d%time.Millisecond != 0 {
				return usageError("--%s=%s: want whole milliseconds", name, d)
			}
			into[f.env] = strconv.FormatInt(d.Milliseconds(), 10)
		case kindHours:
			d := *e.durs[f.name]
			if d%time.Hour != 0 {
				return usageError("--%s=%s: want whole hours (e.g. 168h for 7 days)", name, d)
			}
			into[f.env] = strconv.FormatInt(int64(d/time.Hour), 10)
		case kindInt:
			n, _ := e.fs.GetInt64(name)
			into[f.env] = strconv.FormatInt(n, 10)
		default:
			into[f.env], _ = e.fs.GetString(name)
		}
	}
	return nil
}

// flagError names the flag when a configuration error is about a variable a flag
// set: "--http-timeout=0s is invalid: want ...".
func (e *envFlags) flagError(err error) error {
	var bad *featureserver.ConfigError
	if !errors.As(err, &bad) {
		return nil
	}
	sent := map[string]string{}
	_ = e.overrides(sent)
	for _, f := range e.flags {
		if name := e.given(f); name != "" && f.env == bad.Name {
			value := e.fs.Lookup(name).Value.String()
			if value == "" && (f.kind == kindDuration || f.kind == kindHours) {
				value = "0s" // a zero duration prints as nothing
			}
			// The flag is shown as typed unless the configuration masked what it was
			// given (a token, a password in a URL): then the masked form, never the
			// secret.
			if bad.Value != "" && bad.Value != sent[f.env] {
				value = bad.Value
			}
			return usageError("--%s=%q is invalid: want %s", name, value, bad.Accept)
		}
	}
	return nil
}

// getenv reads a variable with the flags' overrides winning.
func withOverrides(getenv func(string) string, overrides map[string]string) func(string) string {
	return func(name string) string {
		if v, ok := overrides[name]; ok {
			return v
		}
		return getenv(name)
	}
}

// load returns the overrides of the JAMBONES_* flags given, once the settings they
// make with getenv are known good: a bad value is a usage error naming its flag.
func (e *envFlags) load(getenv func(string) string) (map[string]string, error) {
	overrides := map[string]string{}
	if err := e.overrides(overrides); err != nil {
		return nil, err
	}
	if _, err := featureserver.LoadCallControlConfig(withOverrides(getenv, overrides)); err != nil {
		if ferr := e.flagError(err); ferr != nil {
			return nil, ferr
		}
		return nil, usageError("%v", err)
	}
	return overrides, nil
}
