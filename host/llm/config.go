package llm

import "time"

// Config is the `llm:` section of palisade.yaml, decoded by the gateway (strictly) and turned
// into Options. Durations are YAML strings such as "5s".
//
//	llm:
//	  providers:
//	    - {name: claude, kind: anthropic, model: claude-sonnet-4-5, api_key_env: ANTHROPIC_API_KEY, rate_limit: 5}
//	    - {name: vllm, kind: openai, base_url: "http://gpu:8000/v1", model: qwen, stream: true}
//	    - {name: client, kind: mcp}
//	    - {name: local, kind: local}
//	  preference: [client, claude, vllm, local]
//	  timeout: 5s
//	  cache: {size: 1024, ttl: 5m}
//	  breaker: {failures: 5, cooldown: 30s}
//	  health_interval: 30s
type Config struct {
	Providers      []ProviderConfig `yaml:"providers" json:"providers"`
	Preference     []string         `yaml:"preference" json:"preference"`
	Timeout        time.Duration    `yaml:"timeout" json:"timeout"` // per attempt; 0 = 10s
	MaxFieldBytes  int              `yaml:"max_field_bytes" json:"max_field_bytes"`
	Cache          CacheConfig      `yaml:"cache" json:"cache"`
	Breaker        BreakerOptions   `yaml:"breaker" json:"breaker"`
	HealthInterval time.Duration    `yaml:"health_interval" json:"health_interval"` // for RunHealthChecks; 0 = 30s
}

// CacheConfig sizes the answer cache.
type CacheConfig struct {
	Size int           `yaml:"size" json:"size"` // 0 = 1024; negative disables
	TTL  time.Duration `yaml:"ttl" json:"ttl"`   // 0 = 5m
}

// Options returns the judge options for c; the caller adds Logger (and HTTPClient, Custom).
func (c Config) Options() Options {
	return Options{
		Providers:     c.Providers,
		Preference:    c.Preference,
		Timeout:       c.Timeout,
		MaxFieldBytes: c.MaxFieldBytes,
		CacheSize:     c.Cache.Size,
		CacheTTL:      c.Cache.TTL,
		Breaker:       c.Breaker,
	}
}
