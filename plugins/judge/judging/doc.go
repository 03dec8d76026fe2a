// Package judging is the logic of the judge plugin: decide whether a tool call needs the LLM
// judge (a rule said `sample`, or the risk score sits in a configured band), ask the host's
// `sample` function, and turn the answer into a verdict. Errors fail closed. It reads the JSON
// envelope (EvaluateJSON) or its view with the earlier verdicts (EvaluateViewJSON, layout 2),
// and both give the same verdict.
//
// It is plain Go that runs natively under go test and inside the wasip1 plugin (../main.go); the
// sample call is passed in as a function. It imports sdk/go/abi and tidwall/gjson only; it must
// not import go-pdk or anything under host/.
package judging
