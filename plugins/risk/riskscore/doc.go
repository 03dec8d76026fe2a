// Package riskscore is the logic of the risk plugin: a composite risk from named signals in
// [0,1], weights renormalized over the signals present, levels low/medium/high, and a policy
// matrix by tool criticality that yields allow (with or without an execution token), ask or deny
// (with an optional fallback tool). It reads the JSON envelope (EvaluateJSON) or its view with
// the earlier verdicts (EvaluateViewJSON, layout 2), and both give the same verdict.
//
// It is plain Go that runs natively under go test and inside the wasip1 plugin (../main.go). It
// imports sdk/go/abi and tidwall/gjson only; it must not import go-pdk or anything under host/.
package riskscore
