//go:build wasip1

package palisade

import (
	"encoding/json"

	"github.com/added060/palisade/sdk/go/abi"
	"github.com/extism/go-pdk"
)

// Input returns the raw envelope JSON. Use it with a non-reflective parser on hot paths.
func Input() []byte { return pdk.Input() }

// Envelope decodes the input as an envelope.
func Envelope() (abi.Envelope, error) {
	var env abi.Envelope
	err := json.Unmarshal(pdk.Input(), &env)
	return env, err
}

// Config returns the Extism config value for key: "config" holds the stage config as JSON, and
// each name in the stage's data map holds that file's contents (YAML converted to JSON).
func Config(key string) (string, bool) { return pdk.GetConfig(key) }

// Output writes v as the verdict and returns 0, the value evaluate should return.
func Output(v abi.Verdict) int32 {
	b, err := json.Marshal(v)
	if err != nil {
		return Fail(err)
	}
	pdk.Output(b)
	return 0
}

// OutputRaw writes an already-encoded verdict and returns 0.
func OutputRaw(b []byte) int32 {
	pdk.Output(b)
	return 0
}

// Describe writes d as the describe output and returns 0.
func Describe(d abi.Describe) int32 {
	if d.ABI == "" {
		d.ABI = abi.Version
	}
	b, err := json.Marshal(d)
	if err != nil {
		return Fail(err)
	}
	pdk.Output(b)
	return 0
}

// Fail records err as the plugin error and returns 1; the host applies the stage's failure mode.
func Fail(err error) int32 {
	pdk.SetError(err)
	return 1
}

// Log writes a message to the host's log at info level.
func Log(msg string) { pdk.Log(pdk.LogInfo, msg) }
