package featureserver

import (
	"encoding/json"

	"github.com/switchboard-voice/switchboard/callctl"
)

// parseScenario reads the scenario object of a create-call request (the `simulate
// --scenario` format, as JSON): the caller's script and the expectations the call's
// record is checked against when it ends.
func parseScenario(scenario map[string]any) (callctl.Script, callctl.Expectations, error) {
	src, err := json.Marshal(scenario)
	if err != nil {
		return callctl.Script{}, callctl.Expectations{}, err
	}
	sc, err := callctl.ParseScenario(src)
	if err != nil {
		return callctl.Script{}, callctl.Expectations{}, err
	}
	return sc.Script(), sc.Expectations(), nil
}
