package main

import (
	"encoding/json"
	"time"
)

// Config is testop's configuration.
type Config struct {
	Clients []Client `json:"clients"`
	Users   []User   `json:"users"`
}

// Client is an OAuth client. With a Secret it is confidential and uses client_credentials;
// without, it is public and uses authorization code with PKCE.
type Client struct {
	ID           string         `json:"id"`
	Secret       string         `json:"secret,omitempty"`
	RedirectURIs []string       `json:"redirect_uris,omitempty"`
	Claims       map[string]any `json:"claims,omitempty"` // client_credentials tokens carry them
	// Lifetime of its access tokens ("5m"; negative mints tokens already expired); 0 = 5m.
	Lifetime Duration `json:"lifetime,omitempty"`
	// Opaque makes its access tokens opaque (checked by introspection) instead of JWTs.
	Opaque bool `json:"opaque,omitempty"`
}

// User is a resource owner the login page approves.
type User struct {
	ID     string         `json:"id"`
	Claims map[string]any `json:"claims,omitempty"`
}

// Duration is a time.Duration written as "5m" in JSON.
type Duration time.Duration

// UnmarshalJSON reads "5m".
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := time.ParseDuration(s)
	*d = Duration(v)
	return err
}

// MarshalJSON writes "5m".
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }
