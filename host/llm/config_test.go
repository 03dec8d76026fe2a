package llm_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/added060/palisade/host/llm"
	"gopkg.in/yaml.v3"
)

func TestConfigFromYAML(t *testing.T) {
	const doc = `
providers:
  - {name: claude, kind: anthropic, model: claude-test, api_key_env: NOPE_UNSET, rate_limit: 5, burst: 2, timeout: 3s, stream: true}
  - name: vllm
    kind: openai
    base_url: http://127.0.0.1:1/v1
    model: qwen
    headers: {X-Team: sec}
  - name: local
    kind: local
    local: {deny_patterns: [drop table], ask_patterns: [], default: ask}
preference: [local, vllm, claude]
timeout: 5s
max_field_bytes: 1000
cache: {size: 10, ttl: 1m}
breaker: {failures: 2, cooldown: 10s}
health_interval: 15s
`
	var c llm.Config
	dec := yaml.NewDecoder(strings.NewReader(doc))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil {
		t.Fatal(err)
	}
	if c.Timeout != 5*time.Second || c.Cache.TTL != time.Minute || c.Breaker.Cooldown != 10*time.Second || c.HealthInterval != 15*time.Second {
		t.Fatalf("durations = %+v", c)
	}
	if p := c.Providers[0]; p.Timeout != 3*time.Second || p.RateLimit != 5 || !p.Stream {
		t.Fatalf("provider 0 = %+v", p)
	}
	if c.Providers[2].Local.Default != "ask" || len(c.Providers[2].Local.DenyPatterns) != 1 {
		t.Fatalf("local = %+v", c.Providers[2].Local)
	}
	j, err := llm.New(c.Options())
	if err != nil {
		t.Fatal(err)
	}
	st := j.Status()
	if len(st) != 3 || st[0].Name != "local" || st[2].Kind != "anthropic" {
		t.Fatalf("status = %+v", st)
	}
	resp, err := j.Sample(context.Background(), secretReq)
	if err != nil || resp.Decision != "ask" || resp.Provider != "local" {
		t.Fatalf("resp = %+v err = %v", resp, err)
	}
	bad := yaml.NewDecoder(strings.NewReader("providers: [{kind: local, modle: x}]"))
	bad.KnownFields(true)
	if err := bad.Decode(&llm.Config{}); err == nil {
		t.Fatal("typo accepted")
	}
}
