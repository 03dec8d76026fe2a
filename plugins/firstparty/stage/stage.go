// Package stage is the first-party module's dispatch, written once for both places it runs:
// inside the Wasm guest (plugins/firstparty's main, over the Go SDK's host calls) and natively
// in the host (host/plugin's native path, over the host's own functions), so that the two
// answer alike by construction. A Stage serves one stage's role for its life, as one instance
// of the module does: its role and config are read on the first call and kept, and it is used
// by one call at a time.
package stage

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/added060/palisade/plugins/detector/scan"
	"github.com/added060/palisade/plugins/injection/detect"
	"github.com/added060/palisade/plugins/judge/judging"
	"github.com/added060/palisade/plugins/risk/riskscore"
	"github.com/added060/palisade/plugins/rules/ruleset"
	"github.com/added060/palisade/sdk/go/abi"
	"github.com/added060/palisade/sdk/go/jsonw"
)

// Host is what a stage asks of whoever runs it: its config values (config_get: "config" is
// the stage config as JSON, each data key its file) and the host functions of its
// capabilities. A nil function is a capability not granted.
type Host struct {
	Config     func(key string) (string, bool)
	InferScore func(abi.ScoreRequest) (abi.ScoreResponse, error)
	SampleRaw  func(req []byte) ([]byte, error)
}

// Roles maps each role to its single plugin's describe.
var Roles = map[string]abi.Describe{
	"rules": {Name: "rules", Version: "0.1.0", ABI: abi.Version, Phases: []string{abi.PhaseRequest},
		Input: abi.InputView, View: abi.ViewLayout1},
	"injection": {Name: "injection", Version: "0.1.0", ABI: abi.Version, Phases: []string{abi.PhaseRequest, abi.PhaseResponse},
		Input: abi.InputView, View: abi.ViewLayout1},
	"detector": {Name: "detector", Version: "0.1.0", ABI: abi.Version, Phases: []string{abi.PhaseRequest, abi.PhaseResponse},
		Capabilities: []string{"infer"}, Input: abi.InputView, View: abi.ViewLayout1},
	"risk": {Name: "risk", Version: "0.1.0", ABI: abi.Version, Phases: []string{abi.PhaseRequest},
		Input: abi.InputView, View: abi.ViewLayout2},
	"judge": {Name: "judge", Version: "0.1.0", ABI: abi.Version, Phases: []string{abi.PhaseRequest},
		Capabilities: []string{"sample"}, Input: abi.InputView, View: abi.ViewLayout2},
}

// Stage is one stage's role and state.
type Stage struct {
	host    Host
	role    string
	cfg     []byte // the stage config without `role`
	initErr error
	ready   bool

	rulesEngine *ruleset.Engine
	evaluator   *detect.Evaluator
	scanCfg     scan.Config
	scorer      *riskscore.Scorer
	judge       *judging.Judge
	buf         []byte // risk and judge's verdict, reused
	verdict     []byte // the detector's verdict, reused
}

// New returns a stage that reads its role and config through h on its first call.
func New(h Host) *Stage { return &Stage{host: h, buf: make([]byte, 0, 2048)} }

// readRole reads the stage config once and splits off `role`.
func (s *Stage) readRole() error {
	if s.role != "" {
		return nil
	}
	raw, _ := s.host.Config("config")
	m := map[string]json.RawMessage{}
	if raw != "" {
		if err := json.Unmarshal([]byte(raw), &m); err != nil {
			return fmt.Errorf("firstparty: config: %w", err)
		}
	}
	var r string
	if err := json.Unmarshal(m["role"], &r); err != nil || Roles[r].Name == "" {
		return fmt.Errorf("firstparty: config.role is %s; one of rules, injection, detector, risk, judge", m["role"])
	}
	delete(m, "role")
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	s.role, s.cfg = r, b
	return nil
}

// setup builds the role's state from the stage config, as the role's single plugin does; an
// error is kept and answered to every later call.
func (s *Stage) setup() error {
	if s.ready {
		return s.initErr
	}
	s.ready = true
	if s.initErr = s.readRole(); s.initErr != nil {
		return s.initErr
	}
	switch s.role {
	case "rules":
		src, ok := s.host.Config("rules")
		if !ok {
			src = string(s.cfg)
		}
		var c ruleset.Config
		if c, s.initErr = ruleset.Parse([]byte(src)); s.initErr == nil {
			s.rulesEngine, s.initErr = ruleset.New(c)
		}
	case "injection":
		var c detect.Config
		if c, s.initErr = detect.ParseConfig(s.cfg); s.initErr == nil {
			s.evaluator = detect.NewEvaluator(c)
		}
	case "detector":
		s.scanCfg, s.initErr = scan.ParseConfig(s.cfg)
	case "risk":
		prof, _ := s.host.Config("profiles")
		s.scorer, s.initErr = riskscore.New(s.cfg, []byte(prof))
	case "judge":
		s.judge, s.initErr = judging.New(s.cfg)
	}
	return s.initErr
}

// Describe answers the role's describe; a config that names no role is an error, so the stage
// does not load.
func (s *Stage) Describe() (abi.Describe, error) {
	if err := s.readRole(); err != nil {
		return abi.Describe{}, err
	}
	return Roles[s.role], nil
}

// Evaluate judges one input (the view when the host laid one out, else the JSON envelope) and
// returns the verdict's JSON, which stays valid until the next call; an error is the plugin's
// own (the host applies the stage's failure mode).
func (s *Stage) Evaluate(input []byte) ([]byte, error) {
	if err := s.setup(); err != nil {
		return nil, err
	}
	switch s.role {
	case "injection":
		return s.evaluator.EvaluateInput(input)
	case "detector":
		infer := s.host.InferScore
		if infer == nil {
			infer = func(abi.ScoreRequest) (abi.ScoreResponse, error) {
				return abi.ScoreResponse{}, errors.New("host function infer_score: not given to this stage")
			}
		}
		v, err := scan.EvaluateScores(input, s.scanCfg, infer)
		if err != nil {
			return nil, err
		}
		s.verdict, err = jsonw.AppendVerdict(s.verdict[:0], v)
		return s.verdict, err
	}
	var (
		v   abi.View
		err error
	)
	isView := abi.IsView(input)
	if isView {
		if v, err = abi.ParseView(input); err != nil {
			return nil, err
		}
	}
	switch s.role {
	case "rules":
		if isView {
			if err := ruleset.CheckView(v); err != nil {
				return nil, err
			}
			return s.rulesEngine.EvaluateView(v, time.Now()).Verdict(), nil
		}
		return s.rulesEngine.Evaluate(input, time.Now()).Verdict(), nil
	case "risk":
		if isView {
			s.buf, err = s.scorer.EvaluateViewJSON(&v, s.buf[:0])
			return s.buf, err
		}
		s.buf = s.scorer.EvaluateJSON(input, s.buf[:0])
		return s.buf, nil
	case "judge":
		sample := s.host.SampleRaw
		if sample == nil {
			sample = func([]byte) ([]byte, error) {
				return nil, errors.New("host function sample: not given to this stage")
			}
		}
		if isView {
			s.buf, err = s.judge.EvaluateViewJSON(&v, sample, s.buf[:0])
			return s.buf, err
		}
		s.buf = s.judge.EvaluateJSON(input, sample, s.buf[:0])
		return s.buf, nil
	}
	return nil, errors.New("firstparty: no role")
}
