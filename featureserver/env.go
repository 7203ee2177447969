package featureserver

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ErrBadConfig is wrapped by every configuration error.
var ErrBadConfig = errors.New("bad configuration")

// ErrDatabaseInUse is wrapped by the error of NewNode when another node holds the
// SQLite database: nothing of the file was touched.
var ErrDatabaseInUse = errors.New("database in use by another node")

// ConfigError names the variable (or flag) at fault and the range it accepts.
type ConfigError struct {
	Name   string // e.g. JAMBONES_HTTP_TIMEOUT
	Value  string
	Accept string // e.g. "an integer number of milliseconds in [1, 600000]"
}

func (e *ConfigError) Error() string {
	return fmt.Sprintf("%s=%q is invalid: want %s", e.Name, e.Value, e.Accept)
}

// Unwrap makes errors.Is(err, ErrBadConfig) hold.
func (e *ConfigError) Unwrap() error { return ErrBadConfig }

// intSetting is one integer variable with its accepted range. Its default is its
// field's (Config.WithDefaults, CallControlConfig.WithDefaults), stated there once.
type intSetting struct {
	name     string
	min, max int64
	unit     string // "milliseconds", "bytes", "" (plain)
}

func (s intSetting) accept() string {
	what := "an integer"
	if s.unit != "" {
		what += " number of " + s.unit
	}
	return fmt.Sprintf("%s in [%d, %d]", what, s.min, s.max)
}

// parse reads the setting from v; an empty v means unset (0: the field's default).
// Anything that is not a plain base-10 integer in range is an error: a bad value is
// never silently replaced.
func (s intSetting) parse(v string) (int64, error) {
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || n < s.min || n > s.max {
		return 0, &ConfigError{Name: s.name, Value: v, Accept: s.accept()}
	}
	return n, nil
}

func (s intSetting) duration(v string) (time.Duration, error) {
	n, err := s.parse(v)
	return time.Duration(n) * time.Millisecond, err
}

// check reports a field of a Config built in Go whose value n is out of the
// setting's range.
func (s intSetting) check(field string, n int64) error {
	if n < s.min || n > s.max {
		return &ConfigError{Name: field, Value: strconv.FormatInt(n, 10), Accept: fmt.Sprintf("%s (as %s)", s.accept(), s.name)}
	}
	return nil
}

// checkDuration is check for a setting in milliseconds.
func (s intSetting) checkDuration(field string, d time.Duration) error {
	if d < time.Duration(s.min)*time.Millisecond || d > time.Duration(s.max)*time.Millisecond {
		return &ConfigError{Name: field, Value: d.String(), Accept: fmt.Sprintf("a duration in [%v, %v] (as %s)",
			time.Duration(s.min)*time.Millisecond, time.Duration(s.max)*time.Millisecond, s.name)}
	}
	return nil
}
