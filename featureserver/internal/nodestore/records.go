package nodestore

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/switchboard-voice/switchboard/internal/sqlrows"
)

// The JSON columns the stores keep alike (pgnode, sqlitenode): a call's record and
// recovery, an application's hooks, an account's notification e-mails.

// EncodeCall is what a store keeps of c: its record (c's JSON form) and its Recovery
// as JSON, nil when c has none.
func EncodeCall(c Call) (record string, recovery *string, err error) {
	b, err := json.Marshal(c)
	if err != nil {
		return "", nil, err
	}
	if c.Recovery != nil {
		r, err := json.Marshal(c.Recovery)
		if err != nil {
			return "", nil, err
		}
		rs := string(r)
		recovery = &rs
	}
	return string(b), recovery, nil
}

// DecodeCall reads a stored call record.
func DecodeCall(record string) (Call, error) {
	var c Call
	if err := json.Unmarshal([]byte(record), &c); err != nil {
		return Call{}, fmt.Errorf("stored call record: %w", err)
	}
	return c, nil
}

// DecodeCallWithRecovery reads a stored call record and its recovery (nil: none).
func DecodeCallWithRecovery(record string, recovery *string) (Call, error) {
	c, err := DecodeCall(record)
	if err != nil {
		return Call{}, err
	}
	if recovery != nil {
		c.Recovery = &CallRecovery{}
		if err := json.Unmarshal([]byte(*recovery), c.Recovery); err != nil {
			return Call{}, fmt.Errorf("call %s: stored recovery: %w", c.CallSid, err)
		}
	}
	return c, nil
}

// EncodeHooks is how a store keeps an application's hooks: as JSON.
func EncodeHooks(app Application) (callHook, statusHook string, err error) {
	ch, err := json.Marshal(app.CallHook)
	if err != nil {
		return "", "", err
	}
	sh, err := json.Marshal(app.CallStatusHook)
	if err != nil {
		return "", "", err
	}
	return string(ch), string(sh), nil
}

// EncodeSettings returns app's settings as stored: JSON.
func EncodeSettings(app Application) (string, error) {
	b, err := json.Marshal(app.ApplicationSettings)
	return string(b), err
}

// DecodeSettings sets app's settings from their stored JSON.
func DecodeSettings(app *Application, stored string) error {
	if err := json.Unmarshal([]byte(stored), &app.ApplicationSettings); err != nil {
		return fmt.Errorf("application %s: settings: %w", app.Sid, err)
	}
	return nil
}

// DecodeHooks sets app's hooks from their stored JSON.
func DecodeHooks(app *Application, callHook, statusHook string) error {
	if err := json.Unmarshal([]byte(callHook), &app.CallHook); err != nil {
		return fmt.Errorf("application %s: call hook: %w", app.Sid, err)
	}
	if err := json.Unmarshal([]byte(statusHook), &app.CallStatusHook); err != nil {
		return fmt.Errorf("application %s: status hook: %w", app.Sid, err)
	}
	return nil
}

// DecodeEmails reads an account's stored notification e-mails; a null one (an
// earlier save of nil) is none.
func DecodeEmails(stored string) ([]string, error) {
	var emails []string
	if err := json.Unmarshal([]byte(stored), &emails); err != nil {
		return nil, err
	}
	if emails == nil {
		emails = []string{}
	}
	return emails, nil
}

// ScanCall reads a row of a call's record.
func ScanCall(r sqlrows.Row) (Call, error) {
	var record string
	if err := r.Scan(&record); err != nil {
		return Call{}, err
	}
	return DecodeCall(record)
}

// ScanCallWithRecovery reads a row of a call's record and its recovery (NULL: none).
func ScanCallWithRecovery(r sqlrows.Row) (Call, error) {
	var (
		record   string
		recovery *string
	)
	if err := r.Scan(&record, &recovery); err != nil {
		return Call{}, err
	}
	return DecodeCallWithRecovery(record, recovery)
}

// EndedRecord is the record of the call sid, stored as record, once end ended it.
func EndedRecord(sid, record string, end func(Call) Call) (string, error) {
	c, err := DecodeCall(record)
	if err != nil {
		return "", fmt.Errorf("call %s: %w", sid, err)
	}
	b, err := json.Marshal(end(c))
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// AccountTables are the tables whose rows belong to an account, by an account_sid
// column: deleting an account deletes its rows of each.
var AccountTables = []string{"fs_api_tokens", "fs_applications", "fs_calls", "fs_alerts", "fs_status_hooks", "fs_account_notifications",
	"fs_console_sessions", "fs_messages"}

// ScanNotifications reads a row of an account's webhook URL and stored e-mails; a
// query that found none (noRows, its driver's error for no row) is the empty
// setting.
func ScanNotifications(r sqlrows.Row, noRows error) (Notifications, error) {
	var (
		n      Notifications
		emails string
	)
	err := r.Scan(&n.WebhookURL, &emails)
	if errors.Is(err, noRows) {
		return Notifications{Emails: []string{}}, nil
	}
	if err != nil {
		return Notifications{}, err
	}
	if n.Emails, err = DecodeEmails(emails); err != nil {
		return Notifications{}, err
	}
	return n, nil
}
