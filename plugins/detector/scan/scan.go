package scan

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/added060/palisade/sdk/go/abi"
)

// Config is the stage's `config:` in bundle.yaml.
type Config struct {
	// Model is the registry model to ask; "" = "detector-v1".
	Model string `json:"model"`
	// Threshold flags a text when 1 - p(benign) ≥ it; 0 = 0.9.
	// models/detector.yaml carries the trained model's dev-set operating point.
	Threshold float64 `json:"threshold"`
	// Action is the verdict for a flagged message: deny (default), ask or sample.
	Action string `json:"action"`
	// Benign is the model's "nothing found" label; "" = "benign".
	Benign string `json:"benign"`
	// MaxTexts bounds the texts (strings or windows) sent per message, the
	// first in document order; 0 = 128.
	MaxTexts int `json:"max_texts"`
	// MinBytes skips shorter strings (ids, flags, numbers as strings); 0 = 3.
	MinBytes int `json:"min_bytes"`
	// MaxBytes truncates each string before it is windowed; 0 = 65536.
	MaxBytes int `json:"max_bytes"`
	// WindowBytes splits a longer string into overlapping windows of about
	// this size (stride half of it), each classified on its own, so a short
	// injection inside a long tool output is not diluted; 0 = 512, -1 = off.
	WindowBytes int `json:"window_bytes"`
	// ResponseLabels are the labels that count in tool output (the response phase); nil =
	// prompt_injection only: tool output legitimately holds commands, paths, SQL and markup
	// ("Echo: 0" reads like a shell command), as the injection stage also assumes.
	ResponseLabels []string `json:"response_labels"`
}

// ParseConfig reads the stage config JSON ("" or "{}" = defaults) and
// validates it.
func ParseConfig(raw []byte) (Config, error) {
	var c Config
	if len(strings.TrimSpace(string(raw))) > 0 {
		if err := json.Unmarshal(raw, &c); err != nil {
			return c, fmt.Errorf("detector config: %w", err)
		}
	}
	if c.Model == "" {
		c.Model = "detector-v1"
	}
	if c.Threshold == 0 {
		c.Threshold = 0.9
	}
	if c.Action == "" {
		c.Action = abi.ActionDeny
	}
	if c.Benign == "" {
		c.Benign = "benign"
	}
	if c.ResponseLabels == nil {
		c.ResponseLabels = []string{"prompt_injection"}
	}
	if c.MaxTexts == 0 {
		c.MaxTexts = 128
	}
	if c.WindowBytes == 0 {
		c.WindowBytes = 512
	}
	if c.MinBytes == 0 {
		c.MinBytes = 3
	}
	if c.MaxBytes == 0 {
		c.MaxBytes = 65536
	}
	switch {
	case c.Threshold < 0 || c.Threshold > 1:
		return c, fmt.Errorf("detector config: threshold %v not in [0,1]", c.Threshold)
	case c.Action != abi.ActionDeny && c.Action != abi.ActionAsk && c.Action != abi.ActionSample:
		return c, fmt.Errorf("detector config: action %q: want deny, ask or sample", c.Action)
	case c.MaxTexts < 1 || c.MinBytes < 0 || c.MaxBytes < 1:
		return c, fmt.Errorf("detector config: max_texts, min_bytes and max_bytes must be positive")
	case c.WindowBytes > 0 && c.WindowBytes < 16:
		return c, fmt.Errorf("detector config: window_bytes %d < 16", c.WindowBytes)
	}
	return c, nil
}

// Text is one string found in the envelope and where.
type Text struct {
	Path  string // e.g. arguments.query, result.content.0.text
	Value string
}

// Texts collects the strings to classify from an envelope: every string
// value under `arguments` (request phase), `uri`, and every string under
// `result` (response phase) except structural fields such as `type`, in
// document order, skipping strings shorter than c.MinBytes, each cut to
// c.MaxBytes and, when longer than c.WindowBytes, split into overlapping
// windows (path suffix `[start:end]`, byte offsets); at most c.MaxTexts.
func Texts(env []byte, c Config) []Text {
	var out []Text
	add := func(path, s string) {
		if len(out) >= c.MaxTexts || len(s) < c.MinBytes {
			return
		}
		s = s[:runeCut(s, c.MaxBytes)]
		if c.WindowBytes < 0 || len(s) <= c.WindowBytes {
			out = append(out, Text{Path: path, Value: s})
			return
		}
		// Overlapping windows, stride half a window, cut on rune starts.
		stride := c.WindowBytes / 2
		for start := 0; start < len(s) && len(out) < c.MaxTexts; {
			end := start + runeCut(s[start:], c.WindowBytes)
			out = append(out, Text{Path: fmt.Sprintf("%s[%d:%d]", path, start, end), Value: s[start:end]})
			if end == len(s) {
				break
			}
			start += runeCut(s[start:], stride)
		}
	}
	var walk func(path string, r gjson.Result)
	walk = func(path string, r gjson.Result) {
		if len(out) >= c.MaxTexts {
			return
		}
		switch {
		case r.Type == gjson.String:
			add(path, r.Str)
		case r.IsArray():
			i := 0
			r.ForEach(func(_, v gjson.Result) bool {
				walk(path+"."+strconv.Itoa(i), v)
				i++
				return len(out) < c.MaxTexts
			})
		case r.IsObject():
			r.ForEach(func(k, v gjson.Result) bool {
				if strings.HasPrefix(path, "result") && structural[k.String()] {
					return true // MCP content metadata, not text
				}
				walk(path+"."+k.String(), v)
				return len(out) < c.MaxTexts
			})
		}
	}
	fields := gjson.GetManyBytes(env, "arguments", "uri", "result")
	for i, name := range []string{"arguments", "uri", "result"} {
		walk(name, fields[i])
	}
	return out
}

// structural names the MCP result fields that describe content rather than
// hold it ({"type":"text"}, mimeType): they are never classified.
var structural = map[string]bool{"type": true, "mimeType": true, "isError": true}

// Evaluate classifies the envelope's texts and returns the verdict: c.Action
// when any text's malicious score (1 - p(benign)) reaches c.Threshold, with
// the categories as labels and one evidence entry per flagged text; none
// otherwise (with the highest score, for the audit). call is the infer host
// function. An infer error is returned: the stage's failure mode decides.
func Evaluate(env []byte, c Config, call CallFunc) (abi.Verdict, error) {
	texts := Texts(env, c)
	if len(texts) == 0 {
		return abi.Verdict{Action: abi.ActionNone, Reason: "no text to classify"}, nil
	}
	raw, err := call(EncodeInferRequest(c.Model, texts))
	if err != nil {
		return abi.Verdict{}, fmt.Errorf("infer %s: %w", c.Model, err)
	}
	results, err := DecodeInferResponse(raw, len(texts), c.Benign)
	if err != nil {
		return abi.Verdict{}, fmt.Errorf("infer %s: %w", c.Model, err)
	}
	var v abi.Verdict
	best, bestAt := -1.0, 0
	var labels []string
	response := gjson.GetBytes(env, "phase").String() == abi.PhaseResponse
	for i, r := range results {
		if response && !slices.Contains(c.ResponseLabels, r.Label) {
			continue // not a finding in tool output
		}
		if r.Score > best {
			best, bestAt = r.Score, i
		}
		if r.Score < c.Threshold {
			continue
		}
		if !slices.Contains(labels, r.Label) {
			labels = append(labels, r.Label)
		}
		v.Evidence = append(v.Evidence, abi.Evidence{Label: r.Label, Path: texts[i].Path, Match: snippet(texts[i].Value)})
	}
	if best < 0 {
		best = 0
	}
	v.Score = round(best)
	v.Rule = "detector"
	if len(v.Evidence) == 0 {
		v.Action = abi.ActionNone
		return v, nil
	}
	slices.Sort(labels)
	v.Action = c.Action
	v.Labels = labels
	v.Reason = fmt.Sprintf("%s: %s (score %.3f) in %s", c.Model, results[bestAt].Label, best, texts[bestAt].Path)
	return v, nil
}

// runeCut is the largest n ≤ max (and ≤ len(s)) that does not split a
// UTF-8 sequence; at least 1 for a non-empty s.
func runeCut(s string, max int) int {
	if len(s) <= max {
		return len(s)
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	if cut == 0 {
		_, size := utf8.DecodeRuneInString(s)
		return size
	}
	return cut
}

func snippet(s string) string {
	const max = 120
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func round(f float64) float64 { return float64(int64(f*1e4+0.5)) / 1e4 }
