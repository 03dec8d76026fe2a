package argkind

import (
	"encoding/json"
	"strings"
)

// field is what a tool's input schema declares about one top-level argument's value: a type
// of integer, number or boolean, an enum (or a const), or a string format this package checks.
// Array properties take their items' declaration (the value of each item is checked). A
// property declared as alternatives (anyOf, oneOf) is a field when every alternative that is
// not null is one: alts holds them, and a value conforms when it conforms to any.
type field struct {
	types  []string // integer, number, boolean (a "null" alternative is dropped)
	enum   []string // members as strings: a string member as is, any other as its JSON
	format string   // uuid, date, date-time, email, uri (url and iri are read as uri)
	alts   []field  // alternatives (anyOf, oneOf); when set, the fields above are empty
}

// schemaProp is the part of a JSON Schema property this package reads.
type schemaProp struct {
	Type   json.RawMessage   `json:"type"`
	Enum   []json.RawMessage `json:"enum"`
	Const  json.RawMessage   `json:"const"`
	Format string            `json:"format"`
	Items  *schemaProp       `json:"items"`
	Ref    string            `json:"$ref"`
	AnyOf  []schemaProp      `json:"anyOf"`
	OneOf  []schemaProp      `json:"oneOf"`
	AllOf  []schemaProp      `json:"allOf"`
	// Properties declares an object's members: a parameter that is an object (a Pydantic
	// model passed as one argument), read by objectOf.
	Properties map[string]schemaProp `json:"properties"`
}

// maxRefDepth bounds how many $ref and alternative levels fieldOf follows: a schema that
// refers to itself ends there, undeclared.
const maxRefDepth = 8

// fieldOf reads the typed declaration of p; ok is false when p declares nothing this package
// checks (a plain string, an object, a format it does not know). defs are the schema's
// definitions ($defs, or definitions in drafts before 2019-09), which a local $ref
// ("#/$defs/Status") names: generated schemas put an enum there (Pydantic's Enum classes).
// Optional and union parameters arrive as anyOf or oneOf (Pydantic writes `int | None` as
// anyOf integer, null): the declaration holds when every alternative that is not null is
// typed; one plain string alternative, or one this package does not know, means the value may
// be anything, as a "type" list with "string" does. allOf with a single member (how older
// generators attach a description to a $ref) is that member.
func fieldOf(p schemaProp, defs map[string]schemaProp) (field, bool) {
	visits := 0
	return fieldAt(p, defs, 0, &visits)
}

// maxFieldVisits bounds the declarations fieldOf reads for one property: alternatives that
// refer to alternatives fan out (eight levels of twelve $refs are 12^8 reads of a schema a
// few hundred bytes long), so past it the property declares nothing (its key decides).
const maxFieldVisits = 256

func fieldAt(p schemaProp, defs map[string]schemaProp, depth int, visits *int) (field, bool) {
	if *visits++; depth > maxRefDepth || *visits > maxFieldVisits {
		return field{}, false
	}
	if p.Ref != "" {
		name, ok := strings.CutPrefix(p.Ref, "#/$defs/")
		if !ok {
			name, ok = strings.CutPrefix(p.Ref, "#/definitions/")
		}
		d, found := defs[name]
		if !ok || !found {
			return field{}, false // a remote or unknown reference: nothing declared here
		}
		return fieldAt(d, defs, depth+1, visits)
	}
	if len(p.AllOf) == 1 && len(p.AnyOf) == 0 && len(p.OneOf) == 0 {
		return fieldAt(p.AllOf[0], defs, depth+1, visits)
	}
	if alts := append(p.AnyOf[:len(p.AnyOf):len(p.AnyOf)], p.OneOf...); len(alts) > 0 {
		var f field
		for _, a := range alts {
			if onlyNull(a) {
				continue // the null alternative: an absent value, never text
			}
			af, ok := fieldAt(a, defs, depth+1, visits)
			if !ok || af.format == "uri" {
				return field{}, false // a string (or a URL) alternative: the value may be anything
			}
			f.alts = append(f.alts, af)
		}
		switch len(f.alts) {
		case 0:
			return field{}, false
		case 1:
			return f.alts[0], true
		}
		return f, true
	}
	if p.Items != nil && typeNames(p.Type, "array") {
		return fieldAt(*p.Items, defs, depth+1, visits)
	}
	var f field
	members := p.Enum
	if len(members) == 0 && len(p.Const) > 0 {
		members = []json.RawMessage{p.Const}
	}
	for _, e := range members {
		var s string
		if json.Unmarshal(e, &s) == nil {
			f.enum = append(f.enum, s)
		} else {
			f.enum = append(f.enum, string(e))
		}
	}
	if len(f.enum) > 0 {
		return f, true
	}
	var ts []string
	var one string
	if json.Unmarshal(p.Type, &one) == nil {
		ts = []string{one}
	} else {
		_ = json.Unmarshal(p.Type, &ts)
	}
	other := false // a string (or object) alternative: the value may be anything
	for _, t := range ts {
		switch t {
		case "integer", "number", "boolean":
			f.types = append(f.types, t)
		case "null":
		default:
			other = true
		}
	}
	if len(f.types) > 0 && !other {
		return f, true
	}
	f.types = nil
	switch fm := strings.ToLower(p.Format); fm {
	case "uuid", "date", "date-time", "email":
		f.format = fm
	case "uri", "url", "iri":
		f.format = "uri"
	default:
		return field{}, false
	}
	return f, true
}

// onlyNull reports whether p declares the null type and nothing else.
func onlyNull(p schemaProp) bool {
	if p.Ref != "" || len(p.Enum) > 0 || len(p.Const) > 0 || len(p.AnyOf) > 0 || len(p.OneOf) > 0 || len(p.AllOf) > 0 {
		return false
	}
	var one string
	if json.Unmarshal(p.Type, &one) == nil {
		return one == "null"
	}
	var ts []string
	_ = json.Unmarshal(p.Type, &ts)
	for _, t := range ts {
		if t != "null" {
			return false
		}
	}
	return len(ts) > 0
}

// hasEnum reports whether f (or one of its alternatives) lists members.
func (f field) hasEnum() bool {
	if len(f.enum) > 0 {
		return true
	}
	for _, a := range f.alts {
		if a.hasEnum() {
			return true
		}
	}
	return false
}

// typeNames reports whether a JSON Schema "type" (a name or a list of names) includes name.
func typeNames(raw json.RawMessage, name string) bool {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return one == name
	}
	var ts []string
	_ = json.Unmarshal(raw, &ts)
	for _, t := range ts {
		if t == name {
			return true
		}
	}
	return false
}

// declared names the field's type for a reason: "integer", "one of [open closed]", "a uuid".
func (f field) declared() string {
	if len(f.alts) > 0 {
		names := make([]string, len(f.alts))
		for i, a := range f.alts {
			names[i] = a.declared()
		}
		return strings.Join(names, " or ")
	}
	switch {
	case len(f.enum) > 0:
		const most = 8
		if len(f.enum) > most {
			return "one of [" + strings.Join(f.enum[:most], " ") + " …]"
		}
		return "one of [" + strings.Join(f.enum, " ") + "]"
	case len(f.types) > 0:
		return strings.Join(f.types, " or ")
	case f.format == "uri":
		return "a URL"
	case f.format == "email":
		return "an email address"
	}
	return "a " + f.format
}

// conforms reports whether the string v is a value of the declared type. A string that spells
// the type is accepted ("42" in an integer field, "true" in a boolean one): clients send them.
func (f field) conforms(v string) bool {
	for _, a := range f.alts {
		if a.conforms(v) {
			return true
		}
	}
	switch {
	case len(f.enum) > 0:
		for _, m := range f.enum {
			if v == m {
				return true
			}
		}
		return false
	case len(f.types) > 0:
		for _, t := range f.types {
			if t == "integer" && isInteger(v) || t == "number" && isNumber(v) || t == "boolean" && (v == "true" || v == "false") {
				return true
			}
		}
		return false
	}
	switch f.format {
	case "uuid":
		return isUUID(v)
	case "date":
		return isDate(v)
	case "date-time":
		return isDateTime(v)
	case "email":
		return isEmail(v)
	case "uri":
		return WellFormedURL(v)
	}
	return false
}

// isInteger: an optional sign and 1-20 decimal digits.
func isInteger(v string) bool {
	if v != "" && (v[0] == '-' || v[0] == '+') {
		v = v[1:]
	}
	if v == "" || len(v) > 20 {
		return false
	}
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return false
		}
	}
	return true
}

// isNumber: JSON's number grammar, with an optional leading '+'.
func isNumber(v string) bool {
	if v != "" && (v[0] == '-' || v[0] == '+') {
		v = v[1:]
	}
	digits := func(s string) (rest string, n int) {
		for n < len(s) && s[n] >= '0' && s[n] <= '9' {
			n++
		}
		return s[n:], n
	}
	v, n := digits(v)
	if n == 0 || n > 64 {
		return false
	}
	if strings.HasPrefix(v, ".") {
		if v, n = digits(v[1:]); n == 0 {
			return false
		}
	}
	if v != "" && (v[0] == 'e' || v[0] == 'E') {
		v = v[1:]
		if v != "" && (v[0] == '-' || v[0] == '+') {
			v = v[1:]
		}
		if v, n = digits(v); n == 0 || n > 4 {
			return false
		}
	}
	return v == ""
}

// isUUID: 8-4-4-4-12 hexadecimal digits (RFC 9562's string form, any version).
func isUUID(v string) bool {
	if len(v) != 36 {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if c != '-' {
				return false
			}
			continue
		}
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// isEmail: local@domain, the local part of RFC 5322 atext and dots (no quoted forms), the
// domain of at least two labels of letters, digits and hyphens (or one in brackets is refused:
// an address literal is no email a tool needs).
func isEmail(v string) bool {
	at := strings.LastIndexByte(v, '@')
	if at < 1 || at > 64 || len(v) > 254 {
		return false
	}
	local, domain := v[:at], v[at+1:]
	if local[0] == '.' || local[len(local)-1] == '.' || strings.Contains(local, "..") {
		return false
	}
	for i := 0; i < len(local); i++ {
		c := local[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte(".!#$%&'*+/=?^_`{|}~-", c) >= 0) {
			return false
		}
	}
	return hostName(domain) && strings.Contains(domain, ".")
}

// hostName: dot-separated labels of 1-63 letters, digits and hyphens, not starting or ending
// with a hyphen.
func hostName(h string) bool {
	if h == "" || len(h) > 253 {
		return false
	}
	for _, l := range strings.Split(h, ".") {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}

// WellFormedURL reports whether v is an absolute URL as a careful client writes one: a scheme
// of letters, digits, '+', '-' and '.', for a hierarchical URL a host, and only characters RFC
// 3986 allows unescaped (no white space, quotes, angle brackets, backslashes or control
// characters); a percent sign is followed by two hex digits.
func WellFormedURL(v string) bool {
	if v == "" || len(v) > 8192 {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte("\"<>\\^`{|}", c) >= 0 {
			return false
		}
		if c == '%' && (i+2 >= len(v) || !isHex(v[i+1]) || !isHex(v[i+2])) {
			return false
		}
	}
	colon := strings.IndexByte(v, ':')
	if colon < 1 || !isLetter(v[0]) {
		return false
	}
	for i := 1; i < colon; i++ {
		if c := v[i]; !isLetter(c) && !isDigit(c) && c != '+' && c != '-' && c != '.' {
			return false
		}
	}
	rest := v[colon+1:]
	switch strings.ToLower(v[:colon]) {
	case "javascript", "vbscript":
		return false // script, not a resource: judged as text, every category
	case "mailto", "urn", "tel", "sms", "data", "news", "geo", "magnet", "about", "cid", "mid", "xmpp", "sip", "sips":
		return rest != "" // opaque: mailto:a@b.c, urn:isbn:..., data:image/png;base64,...
	}
	if !strings.HasPrefix(rest, "//") {
		return false // "localhost:6379", "example.com:8080/x": a host and port, not a scheme
	}
	auth := rest[2:]
	if i := strings.IndexAny(auth, "/?#"); i >= 0 {
		auth = auth[:i]
	}
	if i := strings.LastIndexByte(auth, '@'); i >= 0 {
		auth = auth[i+1:]
	}
	host := auth
	if strings.HasPrefix(auth, "[") {
		end := strings.IndexByte(auth, ']')
		if end < 2 {
			return false
		}
		host, auth = auth[:end+1], auth[end+1:]
	} else if i := strings.LastIndexByte(auth, ':'); i >= 0 {
		host, auth = auth[:i], auth[i:]
	} else {
		auth = ""
	}
	if host == "" || strings.ContainsAny(host[min(1, len(host)):], "[") {
		return false
	}
	if auth != "" { // a port: ':' and digits
		if auth[0] != ':' {
			return false
		}
		for i := 1; i < len(auth); i++ {
			if !isDigit(auth[i]) {
				return false
			}
		}
	}
	return true
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// digits parses s as a decimal number of exactly len(s) digits; ok is false otherwise.
func digits(s string) (n int, ok bool) {
	if s == "" {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, true
}

// isDate: YYYY-MM-DD, a day that exists (RFC 3339 full-date).
func isDate(v string) bool {
	if len(v) != 10 || v[4] != '-' || v[7] != '-' {
		return false
	}
	y, ok1 := digits(v[:4])
	m, ok2 := digits(v[5:7])
	d, ok3 := digits(v[8:])
	if !ok1 || !ok2 || !ok3 || m < 1 || m > 12 || d < 1 {
		return false
	}
	days := [...]int{31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}[m-1]
	if m == 2 && y%4 == 0 && (y%100 != 0 || y%400 == 0) {
		days = 29
	}
	return d <= days
}

// isDateTime: RFC 3339 date-time: a full-date, 'T' (or 't'), hh:mm:ss, an optional fraction,
// then 'Z' (or 'z') or ±hh:mm.
func isDateTime(v string) bool {
	if len(v) < 20 || !isDate(v[:10]) || v[10] != 'T' && v[10] != 't' {
		return false
	}
	t := v[11:]
	if len(t) < 8 || t[2] != ':' || t[5] != ':' {
		return false
	}
	h, ok1 := digits(t[:2])
	mi, ok2 := digits(t[3:5])
	s, ok3 := digits(t[6:8])
	if !ok1 || !ok2 || !ok3 || h > 23 || mi > 59 || s > 60 {
		return false
	}
	t = t[8:]
	if strings.HasPrefix(t, ".") {
		n := 1
		for n < len(t) && isDigit(t[n]) {
			n++
		}
		if n == 1 {
			return false
		}
		t = t[n:]
	}
	switch {
	case t == "Z" || t == "z":
		return true
	case len(t) == 6 && (t[0] == '+' || t[0] == '-') && t[3] == ':':
		oh, ok1 := digits(t[1:3])
		om, ok2 := digits(t[4:])
		return ok1 && ok2 && oh <= 23 && om <= 59
	}
	return false
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

// plainMember reports whether an enum member is data a detector has nothing to say about: at
// most 64 bytes, without shell, SQL or markup syntax (; | & $ ` < > ( ) { } quotes, backslash)
// or a parent-directory step.
func plainMember(v string) bool {
	return len(v) <= 64 && !strings.ContainsAny(v, ";|&$`<>(){}'\"\\") && !strings.Contains(v, "..")
}

// object is what an input schema declares about the members of one JSON object in the
// arguments: typed members (fields) and members that are objects themselves (objs; an array of
// objects too).
type object struct {
	fields map[string]field
	objs   map[string]*object
}

// maxObjects bounds how many nested object declarations one input schema builds: a schema that
// refers to itself (a tree of nodes) or fans out wide stops there, its deeper members
// undeclared (judged by key, as before).
const maxObjects = 64

// objectOf builds the declaration of an object from its properties: each member's typed field
// (fieldOf), and each member that is an object, or an array of objects, with properties of its
// own (through a local $ref, a one-member allOf, or an anyOf/oneOf whose only alternative that
// is not null is one). budget counts the object declarations built so far (maxObjects).
func objectOf(props map[string]schemaProp, defs map[string]schemaProp, depth int, budget *int) *object {
	o := &object{}
	for k, p := range props {
		if f, ok := fieldOf(p, defs); ok {
			if o.fields == nil {
				o.fields = map[string]field{}
			}
			o.fields[k] = f
			continue
		}
		if depth >= maxRefDepth || *budget >= maxObjects {
			continue
		}
		if members, ok := objectProps(p, defs, 0); ok {
			*budget++
			if o.objs == nil {
				o.objs = map[string]*object{}
			}
			o.objs[k] = objectOf(members, defs, depth+1, budget)
		}
	}
	return o
}

// objectProps returns the properties p declares for an object value (or for each item of an
// array value), following a local $ref, a one-member allOf, and an anyOf or oneOf whose one
// alternative that is not null is such an object.
func objectProps(p schemaProp, defs map[string]schemaProp, depth int) (map[string]schemaProp, bool) {
	if depth > maxRefDepth {
		return nil, false
	}
	switch {
	case p.Ref != "":
		name, ok := strings.CutPrefix(p.Ref, "#/$defs/")
		if !ok {
			name, ok = strings.CutPrefix(p.Ref, "#/definitions/")
		}
		d, found := defs[name]
		if !ok || !found {
			return nil, false
		}
		return objectProps(d, defs, depth+1)
	case len(p.AllOf) == 1 && len(p.AnyOf) == 0 && len(p.OneOf) == 0:
		return objectProps(p.AllOf[0], defs, depth+1)
	case len(p.AnyOf) > 0 || len(p.OneOf) > 0:
		var only *schemaProp
		for _, alts := range [][]schemaProp{p.AnyOf, p.OneOf} {
			for i := range alts {
				if onlyNull(alts[i]) {
					continue
				}
				if only != nil {
					return nil, false // two shapes: which one a value has is not declared here
				}
				only = &alts[i]
			}
		}
		if only == nil {
			return nil, false
		}
		return objectProps(*only, defs, depth+1)
	case p.Items != nil && typeNames(p.Type, "array"):
		return objectProps(*p.Items, defs, depth+1)
	case len(p.Properties) > 0:
		return p.Properties, true
	}
	return nil, false
}

// Decl is what a tool's input schema declares for the members of one object in the arguments:
// the arguments object itself (Tool.Root), or an object-valued member of a declared object
// (Decl.Object). The zero value declares nothing: its members are judged by key.
type Decl struct{ o *object }

// Root is the declaration of the arguments object's members (zero for a nil Tool or one
// without an input schema).
func (t *Tool) Root() Decl {
	if t == nil {
		return Decl{}
	}
	return Decl{t.root}
}

// Object is the declaration of the members of the object at key (or of each object in the
// array at key); zero when d does not declare one there.
func (d Decl) Object(key string) Decl {
	if d.o == nil {
		return Decl{}
	}
	return Decl{d.o.objs[key]}
}

// Mismatch describes a value that violates its field's declared type; the zero value means
// none.
type Mismatch struct {
	Declared string // the declared type in words: "integer", "one of [open closed]", "a uuid"
	URL      bool   // the field is declared a URL (format uri or url)
}

// Judge classifies the value v of the argument at key with the input schema first. top says
// whether v is a top-level argument (or an item of a top-level array): only those are
// declared by the schema's properties. It is JudgeIn with the root declaration when top, and
// with none otherwise.
func (t *Tool) Judge(key, v string, top bool) (Kind, Mismatch) {
	if top {
		return t.JudgeIn(t.Root(), key, v)
	}
	return t.JudgeIn(Decl{}, key, v)
}

// JudgeIn classifies the value v of the member key of an object that d declares (or of an item
// of the array at key), with the input schema first. A value that conforms to a declared
// integer, number, boolean, enum or format is Typed, or TypedURL for a URL; one that violates
// it is Unknown (every category: strict) with the mismatch; any other value is
// t.Of(key).ForValue(v).
func (t *Tool) JudgeIn(d Decl, key, v string) (Kind, Mismatch) {
	if t != nil && d.o != nil {
		if f, ok := d.o.fields[key]; ok {
			if !f.conforms(v) {
				return Unknown, Mismatch{Declared: f.declared(), URL: f.format == "uri"}
			}
			if f.format == "uri" {
				return TypedURL, Mismatch{}
			}
			if f.hasEnum() && !plainMember(v) {
				// The schema comes from the server: an enum member that holds command, SQL or
				// markup syntax ("; rm -rf /") is no proof of harmlessness. Judge it strictly.
				return Unknown, Mismatch{}
			}
			return Typed, Mismatch{}
		}
	}
	return t.Of(key).ForValue(v), Mismatch{}
}
