package nodestore

import (
	"encoding/json"
	"fmt"

	"github.com/switchboard-voice/switchboard/internal/secretbox"
)

// The secrets a store keeps are sealed with the operator's key when one is set
// (internal/secretbox): an account's webhook secrets, the passwords of its
// applications' hooks and status hooks, the status hook password a call's Recovery
// holds. Each is bound to its place (Where*): a value moved to another row does not
// open. API tokens and session secrets are kept as their hashes instead.

// WhereAccountSecret is the place of an account's webhook secret (previous: the
// secret a rotation replaced).
func WhereAccountSecret(sid string, previous bool) string {
	if previous {
		return "fs_accounts.previous_webhook_secret:" + sid
	}
	return "fs_accounts.webhook_secret:" + sid
}

// WhereHookPassword is the place of the password of an application's hook (status:
// its status hook, else its call hook).
func WhereHookPassword(appSid string, status bool) string {
	if status {
		return "fs_applications.call_status_hook:" + appSid
	}
	return "fs_applications.call_hook:" + appSid
}

// WhereStatusHookPassword is the place of the password of a status hook the
// account configured at url.
func WhereStatusHookPassword(account, url string) string {
	return "fs_status_hooks.password:" + account + "\x00" + url
}

// WhereRecoveryPassword is the place of the status hook password of a call's
// Recovery.
func WhereRecoveryPassword(callSid string) string { return "fs_calls.recovery:" + callSid }

// secretErr names the place of a secret that could not be sealed or opened.
func secretErr(what string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("the stored secret of %s: %w (SWITCHBOARD_SECRETS_KEY)", what, err)
}

// SealAccount returns a with its webhook secrets sealed.
func SealAccount(k *secretbox.Keyring, a Account) (Account, error) {
	var err, perr error
	a.WebhookSecret, err = k.Seal(a.WebhookSecret, WhereAccountSecret(a.Sid, false))
	a.PreviousWebhookSecret, perr = k.Seal(a.PreviousWebhookSecret, WhereAccountSecret(a.Sid, true))
	return a, secretErr("account "+a.Sid, firstErr(err, perr))
}

// OpenAccount returns a, as read, with its webhook secrets opened.
func OpenAccount(k *secretbox.Keyring, a Account, err error) (Account, error) {
	if err != nil {
		return a, err
	}
	var perr error
	a.WebhookSecret, err = k.Open(a.WebhookSecret, WhereAccountSecret(a.Sid, false))
	a.PreviousWebhookSecret, perr = k.Open(a.PreviousWebhookSecret, WhereAccountSecret(a.Sid, true))
	if err = firstErr(err, perr); err != nil {
		return Account{}, secretErr("account "+a.Sid, err)
	}
	return a, nil
}

// SealApplication returns app with its hooks' passwords sealed.
func SealApplication(k *secretbox.Keyring, app Application) (Application, error) {
	var err error
	if app.CallHook.Password, err = k.Seal(app.CallHook.Password, WhereHookPassword(app.Sid, false)); err != nil {
		return app, secretErr("application "+app.Sid, err)
	}
	if app.CallStatusHook != nil {
		h := *app.CallStatusHook
		if h.Password, err = k.Seal(h.Password, WhereHookPassword(app.Sid, true)); err != nil {
			return app, secretErr("application "+app.Sid, err)
		}
		app.CallStatusHook = &h
	}
	return app, nil
}

// OpenApplication returns app, as read, with its hooks' passwords opened.
func OpenApplication(k *secretbox.Keyring, app Application, err error) (Application, error) {
	if err != nil {
		return app, err
	}
	if app.CallHook.Password, err = k.Open(app.CallHook.Password, WhereHookPassword(app.Sid, false)); err != nil {
		return Application{}, secretErr("application "+app.Sid, err)
	}
	if app.CallStatusHook != nil {
		h := *app.CallStatusHook
		if h.Password, err = k.Open(h.Password, WhereHookPassword(app.Sid, true)); err != nil {
			return Application{}, secretErr("application "+app.Sid, err)
		}
		app.CallStatusHook = &h
	}
	return app, nil
}

// SealCall returns c with its Recovery's status hook password sealed.
func SealCall(k *secretbox.Keyring, c Call) (Call, error) {
	if c.Recovery == nil || c.Recovery.StatusHook.Password == "" {
		return c, nil
	}
	r := *c.Recovery
	var err error
	if r.StatusHook.Password, err = k.Seal(r.StatusHook.Password, WhereRecoveryPassword(c.CallSid)); err != nil {
		return c, secretErr("call "+c.CallSid, err)
	}
	c.Recovery = &r
	return c, nil
}

// OpenCall returns c, as read, with its Recovery's status hook password opened.
func OpenCall(k *secretbox.Keyring, c Call, err error) (Call, error) {
	if err != nil || c.Recovery == nil {
		return c, err
	}
	r := *c.Recovery
	if r.StatusHook.Password, err = k.Open(r.StatusHook.Password, WhereRecoveryPassword(c.CallSid)); err != nil {
		return Call{}, secretErr("call "+c.CallSid, err)
	}
	c.Recovery = &r
	return c, nil
}

// ResealHook returns the stored JSON of a hook of application appSid (status: its
// status hook, which may be null) with its password sealed again under k's first
// key, and whether anything changed.
func ResealHook(k *secretbox.Keyring, appSid string, status bool, stored string) (string, bool, error) {
	var h *HookSpec
	if err := json.Unmarshal([]byte(stored), &h); err != nil {
		return "", false, fmt.Errorf("application %s: stored hook: %w", appSid, err)
	}
	if h == nil {
		return stored, false, nil
	}
	var changed bool
	var err error
	if h.Password, changed, err = k.Reseal(h.Password, WhereHookPassword(appSid, status)); err != nil || !changed {
		return stored, false, secretErr("application "+appSid, err)
	}
	b, err := json.Marshal(h)
	return string(b), err == nil, err
}

// ResealRecovery returns a call's stored Recovery (its JSON) with the status hook
// password sealed again under k's first key, and whether anything changed.
func ResealRecovery(k *secretbox.Keyring, callSid, recovery string) (string, bool, error) {
	c, err := DecodeCallWithRecovery(`{}`, &recovery)
	if err != nil {
		return "", false, err
	}
	var changed bool
	if c.Recovery.StatusHook.Password, changed, err = k.Reseal(c.Recovery.StatusHook.Password, WhereRecoveryPassword(callSid)); err != nil || !changed {
		return recovery, false, secretErr("call "+callSid, err)
	}
	_, out, err := EncodeCall(Call{Recovery: c.Recovery})
	if err != nil {
		return "", false, err
	}
	return *out, true, nil
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
