//go:build wasip1

// Command extismpdk is an Extism PDK plugin: built on github.com/extism/go-pdk alone, without
// Palisade's SDK, which targets the direct convention only. It proves that the host still loads
// and runs plugins written for Extism (sdk/ABI.md "Extism compatibility"). Its stage config
// {"mode": ...} picks what it does, as misbehave's: "trap" panics, "loop" never returns, "grow"
// allocates until the memory cap, "error" returns a plugin error, "kv" counts its calls in the
// host's kv store, "deny" denies; anything else has no opinion. With {"when_tool": "x"} it
// misbehaves only for tool x.
package main

import (
	"encoding/json"
	"errors"
	"strconv"

	"github.com/extism/go-pdk"
	"github.com/tidwall/gjson"
)

type config struct {
	Mode     string `json:"mode"`
	WhenTool string `json:"when_tool"`
}

var (
	conf   config
	loaded bool
	sink   [][]byte
)

//go:wasmimport extism:host/user kv
func hostKV(uint64) uint64

//go:wasmexport evaluate
func evaluate() int32 {
	if !loaded { // the stage config is the same for every call
		if s, ok := pdk.GetConfig("config"); ok {
			_ = json.Unmarshal([]byte(s), &conf)
		}
		loaded = true
	}
	tool := gjson.GetBytes(pdk.Input(), "tool").String()
	if conf.WhenTool != "" && tool != conf.WhenTool {
		return output(`{"action":"none"}`)
	}
	switch conf.Mode {
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
	case "error":
		pdk.SetError(errors.New("extismpdk: asked to fail"))
		return 1
	case "deny":
		return output(`{"action":"deny","rule":"extismpdk","reason":"extismpdk says deny"}`)
	case "kv":
		req := pdk.AllocateString(`{"op":"incr","key":"calls"}`)
		defer req.Free()
		off := hostKV(req.Offset())
		if off == 0 {
			pdk.SetError(errors.New("kv returned nothing"))
			return 1
		}
		resp := pdk.FindMemory(off)
		defer resp.Free()
		r := gjson.ParseBytes(resp.ReadBytes())
		if e := r.Get("error").String(); e != "" {
			pdk.SetError(errors.New(e))
			return 1
		}
		return output(`{"action":"none","reason":"count ` + strconv.FormatInt(r.Get("count").Int(), 10) + `"}`)
	}
	return output(`{"action":"none"}`)
}

func output(s string) int32 {
	pdk.OutputString(s)
	return 0
}

func main() {}
