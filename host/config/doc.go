// Package config is the gateway's YAML configuration: its schema, defaults (withDefaults),
// environment and flag overrides, and Validate, which names the bad field. It imports only the
// standard library and yaml.
package config
