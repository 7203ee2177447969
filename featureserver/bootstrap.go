package featureserver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/goccy/go-yaml"

	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore"
	"github.com/switchboard-voice/switchboard/fragment"
	"github.com/switchboard-voice/switchboard/retry"
)

// Bootstrap is the YAML file of `switchboard serve --bootstrap FILE`: accounts with
// their tokens and applications, created or updated at start, for unattended setups.
// Applying the same file twice changes nothing.
//
//	accounts:
//	  - sid: 5f0c1f6e-0000-4000-8000-000000000001
//	    name: Acme
//	    api_token: change-me-to-a-long-random-token
//	    webhook_secret: another-long-secret   # optional: generated when absent
//	    applications:
//	      - sid: 5f0c1f6e-0000-4000-8000-0000000000a1
//	        name: IVR
//	        call_hook: {url: "https://ivr.example.com/call#rc=2&rp=5xx,ct"}
//	        call_status_hook: {url: "https://ivr.example.com/status"}
type Bootstrap struct {
	Accounts []BootstrapAccount `yaml:"accounts"`
}

// BootstrapAccount is one account of a bootstrap file.
type BootstrapAccount struct {
	Sid           string                 `yaml:"sid"`
	Name          string                 `yaml:"name"`
	APIToken      string                 `yaml:"api_token"`
	WebhookSecret string                 `yaml:"webhook_secret"`
	Applications  []BootstrapApplication `yaml:"applications"`
}

// BootstrapApplication is one application of a bootstrap account.
type BootstrapApplication struct {
	Sid            string         `yaml:"sid"`
	Name           string         `yaml:"name"`
	CallHook       BootstrapHook  `yaml:"call_hook"`
	CallStatusHook *BootstrapHook `yaml:"call_status_hook"`
}

// BootstrapHook is a hook of a bootstrap application: its URL (a retry fragment
// allowed), method (POST by default, or GET) and Basic credentials.
type BootstrapHook struct {
	URL      string `yaml:"url"`
	Method   string `yaml:"method"`
	Username string `yaml:"username"`
	Password string `yaml:"password"`
}

func (h *BootstrapHook) spec() *nodestore.HookSpec {
	if h == nil {
		return nil
	}
	return &nodestore.HookSpec{URL: h.URL, Method: h.Method, Username: h.Username, Password: h.Password}
}

// minTokenLength keeps guessable tokens out of unattended setups.
const minTokenLength = 16

// LoadBootstrap reads and validates a bootstrap file. Errors name the file and line.
func LoadBootstrap(path string) (*Bootstrap, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("bootstrap: %w", err)
	}
	return ParseBootstrap(path, data)
}

// ParseBootstrap parses a bootstrap document; name labels errors.
func ParseBootstrap(name string, data []byte) (*Bootstrap, error) {
	var b Bootstrap
	if err := decodeStrictYAML(data, &b); err != nil {
		return nil, fmt.Errorf("bootstrap %s: %w", name, err)
	}
	if err := b.validate(); err != nil {
		return nil, fmt.Errorf("bootstrap %s: %w", name, err)
	}
	return &b, nil
}

func (b *Bootstrap) validate() error {
	sids := map[string]bool{}
	tokens := map[string]bool{}
	unique := func(sid, what string) error {
		if sid == "" {
			return fmt.Errorf("%s: sid is required (it keeps re-applying the file idempotent)", what)
		}
		if sids[sid] {
			return fmt.Errorf("%s: sid %q is used twice", what, sid)
		}
		sids[sid] = true
		return nil
	}
	for i, a := range b.Accounts {
		what := fmt.Sprintf("accounts[%d]", i)
		if err := unique(a.Sid, what); err != nil {
			return err
		}
		if a.Name == "" {
			return fmt.Errorf("%s: name is required", what)
		}
		if len(a.APIToken) < minTokenLength {
			return fmt.Errorf("%s: api_token must be at least %d characters", what, minTokenLength)
		}
		if tokens[a.APIToken] {
			return fmt.Errorf("%s: api_token is used by another account", what)
		}
		tokens[a.APIToken] = true
		for j, app := range a.Applications {
			what := fmt.Sprintf("%s.applications[%d]", what, j)
			if err := unique(app.Sid, what); err != nil {
				return err
			}
			if app.Name == "" {
				return fmt.Errorf("%s: name is required", what)
			}
			if err := checkHook(app.CallHook, true); err != nil {
				return fmt.Errorf("%s.call_hook: %w", what, err)
			}
			if app.CallStatusHook != nil {
				if err := checkHook(*app.CallStatusHook, false); err != nil {
					return fmt.Errorf("%s.call_status_hook: %w", what, err)
				}
			}
		}
	}
	return nil
}

func checkHook(h BootstrapHook, allowWebSocket bool) error {
	t, err := fragment.Parse(h.URL)
	if err != nil {
		return err
	}
	if !allowWebSocket && t.Policy.Transport == fragment.WebSocket {
		return fmt.Errorf("%q: must be an http or https URL", fragment.Redact(h.URL))
	}
	if h.Method != "" && h.Method != "GET" && h.Method != "POST" {
		return fmt.Errorf("method %q: want GET or POST", h.Method)
	}
	return nil
}

// apply creates or updates the file's accounts and applications. An account's
// token replaces the one an earlier bootstrap installed (nodestore.TokenFromBootstrap);
// an account without a webhook secret keeps its own, or gets a new one.
func (b *Bootstrap) apply(ctx context.Context, s nodestore.Store, clock retry.Clock) error {
	// A Bootstrap built in Go rather than parsed is held to the same rules.
	if err := b.validate(); err != nil {
		return fmt.Errorf("bootstrap: %w", err)
	}
	for _, a := range b.Accounts {
		now := clock.Now().UTC()
		acct := nodestore.Account{Sid: a.Sid, Name: a.Name, WebhookSecret: a.WebhookSecret, CreatedAt: now.Truncate(time.Millisecond)}
		if acct.WebhookSecret == "" {
			if existing, err := s.GetAccount(ctx, a.Sid); err == nil {
				acct.WebhookSecret = existing.WebhookSecret
			} else {
				acct.WebhookSecret = nodestore.NewSecret(24)
			}
		}
		if err := s.PutAccount(ctx, nodestore.PutAccountParams{Account: acct, TokenHash: nodestore.HashToken(a.APIToken), Origin: nodestore.TokenFromBootstrap}); err != nil {
			return fmt.Errorf("bootstrap account %s: %w", a.Sid, err)
		}
		for _, app := range a.Applications {
			if err := s.SaveApplication(ctx, nodestore.Application{Sid: app.Sid, AccountSid: a.Sid, Name: app.Name,
				CallHook: *app.CallHook.spec(), CallStatusHook: app.CallStatusHook.spec(), CreatedAt: now}); err != nil {
				return fmt.Errorf("bootstrap application %s: %w", app.Sid, err)
			}
		}
	}
	return nil
}

// decodeStrictYAML decodes data into v, refusing unknown keys, with the file's line in
// errors. goccy/go-yaml v1.19.2 panics on some malformed tags (found by
// FuzzParseBootstrap); that is reported as an error.
func decodeStrictYAML(data []byte, v any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the YAML parser could not read this file (%v)", r)
		}
	}()
	if err := yaml.UnmarshalWithOptions(data, v, yaml.Strict(), yaml.DisallowUnknownField()); err != nil {
		return errors.New(yaml.FormatError(err, false, false))
	}
	return nil
}
