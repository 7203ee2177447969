package nodeapi

import (
	"encoding/json"

	"github.com/switchboard-voice/switchboard/callctl"
	"github.com/switchboard-voice/switchboard/callctl/scenario"
)

// parseScenario reads the scenario object of a create-call request (the `simulate
// --scenario` format, as JSON): the caller's script and the expectations the call's
// record is checked against when it ends.
func parseScenario(obj map[string]any) (callctl.Script, scenario.Expectations, error) {
	src, err := json.Marshal(obj)
	if err != nil {
		return callctl.Script{}, scenario.Expectations{}, err
	}
	sc, err := scenario.Parse(src)
	if err != nil {
		return callctl.Script{}, scenario.Expectations{}, err
	}
	return sc.Script(), sc.Expectations(), nil
}
