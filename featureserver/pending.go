package featureserver

import (
	"errors"

	"github.com/switchboard-voice/switchboard/callctl"
)

// TODO(lead): replace with the callctl scenario parser and live control once landed.
func scriptFromScenario(map[string]any) (callctl.Script, error) {
	return callctl.Script{}, errors.New("scenarios are not supported yet")
}

// Redirect points an active call at a new application URL.
func (m *CallManager) Redirect(accountSid, callSid string, hook HookSpec) error {
	return errors.New("redirect is not supported yet")
}

// Mute mutes or unmutes an active call.
func (m *CallManager) Mute(accountSid, callSid string, mute bool) error {
	return errors.New("mute is not supported yet")
}
