//go:build wasip1

// Command misbehave is a test plugin that fails on purpose, chosen by its stage config
// {"mode": ...}: "trap" panics, "loop" never returns, "grow" allocates until the memory cap,
// "garbage" writes output that is not a verdict, "error" returns a plugin error, "slow_once"
// spins slow_ms on the first call the host's kv store counts (a cold start), "deny" and
// "allow" answer normally, "verdict" answers the config's verdict verbatim, "kv" counts its calls in the host's kv store. With {"when_tool": "x"} it misbehaves only for tool x and otherwise
// has no opinion, so a test can prove the next call still works.
package main

import (
	"encoding/json"
	"errors"
	"strconv"
	"time"

	palisade "github.com/added060/palisade/sdk/go"
	"github.com/added060/palisade/sdk/go/abi"
)

type config struct {
	Mode     string          `json:"mode"`
	WhenTool string          `json:"when_tool"`
	Verdict  json.RawMessage `json:"verdict"` // mode "verdict": answer this verbatim
	SlowMS   int             `json:"slow_ms"` // mode "slow": spin this long, then answer none
}

var sink [][]byte

var _ = palisade.Export(evaluate, nil)

func evaluate() int32 {
	var c config
	if s, ok := palisade.Config("config"); ok {
		_ = json.Unmarshal([]byte(s), &c)
	}
	env, err := palisade.Envelope()
	if err != nil {
		return palisade.Fail(err)
	}
	if c.WhenTool != "" && env.Tool != c.WhenTool {
		return palisade.Output(abi.Verdict{Action: abi.ActionNone})
	}
	switch c.Mode {
	case "trap":
		var m map[string]int
		m["boom"] = 1 // nil map write: panic, so the module traps
	case "loop":
		for {
		}
	case "grow":
		for {
			sink = append(sink, make([]byte, 1<<20))
		}
	case "garbage":
		return palisade.OutputRaw([]byte("this is not json"))
	case "error":
		return palisade.Fail(errors.New("misbehave: asked to fail"))
	case "deny":
		return palisade.Output(abi.Verdict{Action: abi.ActionDeny, Reason: "misbehave says deny", Rule: "misbehave"})
	case "slow":
		start := time.Now()
		for time.Since(start) < time.Duration(c.SlowMS)*time.Millisecond {
		}
		return palisade.Output(abi.Verdict{Action: abi.ActionNone})
	case "slow_once": // spin slow_ms on the host's first call only (capability kv): a cold start
		r, err := palisade.KV(abi.KVRequest{Op: "incr", Key: "slow_once"})
		if err != nil {
			return palisade.Fail(err)
		}
		if r.Count == 1 {
			start := time.Now()
			for time.Since(start) < time.Duration(c.SlowMS)*time.Millisecond {
			}
		}
		return palisade.Output(abi.Verdict{Action: abi.ActionNone})
	case "verdict":
		return palisade.OutputRaw(c.Verdict)
	case "kv": // count calls in the host's kv store (capability kv)
		r, err := palisade.KV(abi.KVRequest{Op: "incr", Key: "calls"})
		if err != nil {
			return palisade.Fail(err)
		}
		return palisade.Output(abi.Verdict{Action: abi.ActionNone, Reason: "count " + strconv.FormatInt(r.Count, 10)})
	case "allow":
		return palisade.Output(abi.Verdict{Action: abi.ActionAllow, Reason: "misbehave says allow"})
	}
	return palisade.Output(abi.Verdict{Action: abi.ActionNone})
}

func main() {}
