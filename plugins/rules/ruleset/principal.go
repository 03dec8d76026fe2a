package ruleset

import (
	"encoding/json"
	"fmt"

	"github.com/added060/palisade/sdk/go/glob"
	"github.com/tidwall/gjson"
)

// Globs is a list of globs that may be written as one string: `subject: "svc-*"` is
// `subject: ["svc-*"]`.
type Globs []string

// UnmarshalJSON accepts a string or a list of strings.
func (g *Globs) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*g = Globs{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return fmt.Errorf("want a glob or a list of globs: %w", err)
	}
	*g = many
	return nil
}

// Principal holds conditions on who is calling: the envelope's `principal` (ABI 1.1), which
// only the host sets from a token it verified (or, in the local modes, the OS user). Every
// given field must hold; a list holds when any glob matches. A rule with a principal
// condition never holds for an envelope without a principal.
type Principal struct {
	Issuer   Globs `json:"issuer"`
	Subject  Globs `json:"subject"`
	ClientID Globs `json:"client_id"`
	// Scopes holds when any granted scope matches any glob.
	Scopes Globs `json:"scopes"`
	// Claims maps a claim name (as the token spells it, dots included) to globs over its
	// value; a claim that is an array (groups, roles) holds when any element matches, so
	// `groups: sre` means "member of sre". A claim the principal lacks never holds.
	Claims map[string]Globs `json:"claims"`
}

// match reports whether the envelope's principal p (a gjson object, possibly missing)
// satisfies the conditions.
func (c *Principal) match(p gjson.Result) bool {
	if !p.IsObject() {
		return false
	}
	f := p.Map()
	if !globsHold(c.Issuer, f["issuer"]) || !globsHold(c.Subject, f["subject"]) || !globsHold(c.ClientID, f["client_id"]) {
		return false
	}
	if len(c.Scopes) > 0 && !anyElement(f["scopes"], c.Scopes) {
		return false
	}
	claims := f["claims"]
	for name, pats := range c.Claims {
		v := claims.Get(gjson.Escape(name))
		if !v.Exists() || !anyElement(v, pats) {
			return false
		}
	}
	return true
}

// globsHold reports whether v's string value matches one of pats; an empty list always holds.
func globsHold(pats Globs, v gjson.Result) bool {
	return len(pats) == 0 || glob.Any(pats, v.String())
}

// anyElement reports whether v (or, for an array, any of its elements) matches one of pats.
func anyElement(v gjson.Result, pats Globs) bool {
	if !v.Exists() {
		return false
	}
	if !v.IsArray() {
		return glob.Any(pats, v.String())
	}
	ok := false
	v.ForEach(func(_, el gjson.Result) bool {
		ok = glob.Any(pats, el.String())
		return !ok
	})
	return ok
}
