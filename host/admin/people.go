package admin

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/added060/palisade/host/config"
	"github.com/added060/palisade/sdk/go/abi"
)

// Role is what a person may do through the admin API. Roles nest: RoleAdmin includes
// RoleApprover, which includes RoleViewer.
type Role int

// Roles, weakest first.
const (
	RoleNone     Role = iota
	RoleViewer        // read: queue, events, chain, bundles
	RoleApprover      // and decide held calls and permission requests
	RoleAdmin         // and bundles, config, everything else
)

func (r Role) String() string {
	switch r {
	case RoleViewer:
		return "viewer"
	case RoleApprover:
		return "approver"
	case RoleAdmin:
		return "admin"
	}
	return "none"
}

// MarshalText writes the role's name.
func (r Role) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// Identity is who called the admin API: a person signed in with the identity provider (a
// session), a bearer access token from it (verified by host/authn), or the break-glass admin
// token.
type Identity struct {
	Issuer  string `json:"issuer,omitempty"`
	Subject string `json:"subject,omitempty"`
	// Name is the email or preferred_username claim, else the subject.
	Name string `json:"name"`
	Role Role   `json:"role"`
	// BreakGlass is true for the shared admin token.
	BreakGlass bool `json:"break_glass,omitempty"`
	// Via is how: session, token or admin-token.
	Via string `json:"via"`
}

// BreakGlassName is decided_by for a decision made with the shared admin token.
const BreakGlassName = "admin-token"

// String is the verified identity recorded as decided_by: "name <issuer#subject>", or
// "issuer#subject" when the name is the subject; "admin-token" for the break-glass token.
func (i Identity) String() string {
	if i.BreakGlass {
		return BreakGlassName
	}
	id := i.Issuer + "#" + i.Subject
	if i.Name == "" || i.Name == i.Subject {
		return id
	}
	return i.Name + " <" + id + ">"
}

type identityKey struct{}

// IdentityFrom returns who is calling, as the admin API's authentication set it (route sets
// use it for decided_by); ok is false outside the authenticated group.
func IdentityFrom(c echo.Context) (Identity, bool) {
	id, ok := c.Get("palisade.identity").(Identity)
	return id, ok
}

// IdentityFromContext is IdentityFrom for a request context.
func IdentityFromContext(ctx context.Context) (Identity, bool) {
	id, ok := ctx.Value(identityKey{}).(Identity)
	return id, ok
}

// roleMapper maps claims to a role.
type roleMapper struct{ c config.RoleClaim }

// role is the strongest role any of the claim's values maps to.
func (m roleMapper) role(claims map[string]any) Role {
	claim := m.c.Claim
	if claim == "" {
		claim = "groups"
	}
	var vals []string
	switch v := claims[claim].(type) {
	case string:
		vals = strings.Fields(v)
	case []any:
		for _, x := range v {
			if s, ok := x.(string); ok {
				vals = append(vals, s)
			}
		}
	case []string:
		vals = v
	}
	best := RoleNone
	for _, v := range vals {
		switch {
		case slices.Contains(m.c.Admin, v):
			best = max(best, RoleAdmin)
		case slices.Contains(m.c.Approver, v):
			best = max(best, RoleApprover)
		case slices.Contains(m.c.Viewer, v):
			best = max(best, RoleViewer)
		}
	}
	return best
}

// nameOf is the email or preferred_username claim, else sub.
func nameOf(claims map[string]any, sub string) string {
	for _, k := range []string{"email", "preferred_username"} {
		if s, ok := claims[k].(string); ok && s != "" {
			return s
		}
	}
	return sub
}

// fromPrincipal is the identity of a verified access token.
func (m roleMapper) fromPrincipal(p *abi.Principal) Identity {
	return Identity{Issuer: p.Issuer, Subject: p.Subject, Name: nameOf(p.Claims, p.Subject), Role: m.role(p.Claims), Via: "token"}
}

// needs is the role a route requires: reading needs viewer; deciding held calls and permission
// requests needs approver; everything else (bundles, activate, rollback, upload, config) admin.
func needs(method, path, prefix string) Role {
	rel := strings.TrimPrefix(path, prefix)
	if method == http.MethodGet || method == http.MethodHead {
		return RoleViewer
	}
	if strings.HasPrefix(rel, "/approvals/") && (strings.HasSuffix(rel, "/approve") || strings.HasSuffix(rel, "/deny")) {
		return RoleApprover
	}
	if strings.HasPrefix(rel, "/history/") && strings.HasSuffix(rel, "/label") {
		return RoleApprover // a person's verdict on a decision, which tuning learns from
	}
	if rel == "/playground" { // judges a made-up call; changes nothing
		return RoleViewer
	}
	if strings.HasPrefix(rel, "/passkeys/register/") {
		return RoleViewer // a person's own passkey, with the role they hold; naming another needs admin (passkeys.go)
	}
	return RoleAdmin
}

// forbidden answers a caller whose role is too weak.
func forbidden(c echo.Context, id Identity, want Role) error {
	return Error(c, http.StatusForbidden, fmt.Sprintf("%s has role %s; this needs %s", id.String(), id.Role, want))
}
