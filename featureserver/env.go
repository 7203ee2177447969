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

// intSetting is one integer variable with its default and accepted range.
type intSetting struct {
	name     string
	def      int64
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

// parse reads the setting from v; an empty v means the default. Anything that is not
// a plain base-10 integer in range is an error: a bad value is never silently replaced.
func (s intSetting) parse(v string) (int64, error) {
	if v == "" {
		return s.def, nil
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
