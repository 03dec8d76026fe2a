package config

import (
	"errors"
	"testing"
)

// TestParsePeopleAndLimits: admin.oidc and the rate limits decode from YAML, and Validate
// names a missing or bad field.
func TestParsePeopleAndLimits(t *testing.T) {
	c, err := Parse([]byte(`listen: 127.0.0.1:8420
bundle: b
upstreams: [{name: a, url: "http://127.0.0.1:1/mcp"}]
admin:
  oidc:
    issuer: https://idp.example
    name: IdP
    client_id: dash
    redirect_url: https://gw.example/admin/api/oidc/callback
    session: 2h
    roles: {claim: groups, viewer: [eng], approver: [sre], admin: [platform]}
limits:
  per_principal: {per_minute: 600, burst: 100}
  tools: [{tool: "deploy_*", per_minute: 6, burst: 2}]
  self: {request_permission: 5}
`))
	if err != nil {
		t.Fatal(err)
	}
	o := c.Admin.OIDC
	if o == nil || o.ClientID != "dash" || o.Session.D().Hours() != 2 || o.Roles.Approver[0] != "sre" {
		t.Fatalf("admin.oidc = %+v", o)
	}
	if c.Limits.PerPrincipal.PerMinute != 600 || c.Limits.Tools[0].Tool != "deploy_*" || c.Limits.Self.RequestPermission != 5 {
		t.Fatalf("limits = %+v", c.Limits)
	}
	for _, tc := range []struct {
		mod  func(*Config)
		path string
	}{
		{func(c *Config) { c.Admin.OIDC.ClientID = "" }, "admin.oidc.client_id"},
		{func(c *Config) { c.Admin.OIDC.RedirectURL = "" }, "admin.oidc.redirect_url"},
		{func(c *Config) { c.Admin.OIDC.Roles = RoleClaim{} }, "admin.oidc.roles"},
		{func(c *Config) { c.Limits.PerPrincipal.PerMinute = 0 }, "limits.per_principal"},
		{func(c *Config) { c.Limits.Tools[0].Tool = "" }, "limits.tools[0]"},
	} {
		d := c.WithDefaults()
		oc := *c.Admin.OIDC
		d.Admin.OIDC = &oc
		pp := *c.Limits.PerPrincipal
		d.Limits.PerPrincipal = &pp
		d.Limits.Tools = append([]ToolRateLimit(nil), c.Limits.Tools...)
		tc.mod(&d)
		var fe *FieldError
		if err := d.Validate(); !errors.As(err, &fe) || fe.Path != tc.path {
			t.Errorf("%s: %v", tc.path, err)
		}
	}
}
