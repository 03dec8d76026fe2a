// Package config is the core of the gateway's YAML configuration: its schema, strict decoding
// (Decode: an unknown key is a *FieldError naming its path), defaults (WithDefaults),
// environment and flag overrides, and Validate, which names the bad field. Feature sections are
// typed by their features; host/gateway embeds Config with them in one struct (gateway.File).
// It imports only the standard library and yaml, never host/.
package config
