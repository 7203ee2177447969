package apptest

import (
	"errors"
	"fmt"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/parser"

	"github.com/switchboard-voice/switchboard/callctl/scenario"
	"github.com/switchboard-voice/switchboard/internal/envexpand"
)

// decodeFolderConfig reads a switchboard-test.yaml: strictly (unknown keys are
// errors), its ${VAR} references resolved by lookup when it is set. Errors are
// *scenario.Error, located at their line.
func decodeFolderConfig(src []byte, lookup envexpand.Lookup, cfg *FolderConfig) (err error) {
	defer func() {
		// goccy/go-yaml panics on some malformed input (see scenario.Parse).
		if r := recover(); r != nil {
			err = &scenario.Error{Msg: fmt.Sprintf("the YAML parser could not read this file (%v)", r)}
		}
	}()
	f, err := parser.ParseBytes(src, 0)
	if err != nil {
		return located(err)
	}
	if len(f.Docs) == 0 || f.Docs[0].Body == nil {
		return nil
	}
	if lookup != nil {
		if _, err := envexpand.YAML(f.Docs[0], lookup); err != nil {
			var ee *envexpand.Error
			if errors.As(err, &ee) {
				return &scenario.Error{Line: ee.Line, Msg: ee.Err.Error()}
			}
			return err
		}
	}
	if err := yaml.NodeToValue(f.Docs[0].Body, cfg, yaml.Strict(), yaml.DisallowUnknownField()); err != nil {
		return located(err)
	}
	if cfg.App != "" {
		if err := scenario.CheckAppURL(cfg.App); err != nil {
			return &scenario.Error{Msg: "app: " + err.Error()}
		}
	}
	if cfg.Start == "" && (cfg.Dir != "" || cfg.StartTimeout != 0) {
		return &scenario.Error{Msg: "dir and start_timeout go with start: (the command that starts the app)"}
	}
	return nil
}

func located(err error) error {
	var se *scenario.Error
	if errors.As(err, &se) {
		return se
	}
	var ye yaml.Error
	if errors.As(err, &ye) && ye.GetToken() != nil {
		return &scenario.Error{Line: ye.GetToken().Position.Line, Msg: yaml.FormatError(err, false, true)}
	}
	return &scenario.Error{Msg: err.Error()}
}
