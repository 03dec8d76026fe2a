package argkind

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/added060/palisade/sdk/go/abi"
)

func TestJudge(t *testing.T) {
	info := &abi.ToolInfo{Name: "get_order", InputSchema: json.RawMessage(`{"type":"object","properties":{
		"id": {"type":"integer"},
		"price": {"type":"number"},
		"paid": {"type":"boolean"},
		"limit": {"type":["integer","null"]},
		"status": {"type":"string","enum":["open","closed"]},
		"mode": {"enum":["fast","; rm -rf /","../../etc/passwd"]},
		"level": {"enum":[1,2,3]},
		"order_ref": {"type":"string","format":"uuid"},
		"day": {"type":"string","format":"date"},
		"at": {"type":"string","format":"date-time"},
		"email": {"type":"string","format":"email"},
		"url": {"type":"string","format":"uri"},
		"callback": {"type":"string","format":"url"},
		"ids": {"type":"array","items":{"type":"integer"}},
		"note": {"type":"string"},
		"mixed": {"type":["integer","string"]},
		"body": {"type":"string","format":"markdown"}
	}}`)}
	tool := ForCall("get_order", info)
	for _, tc := range []struct {
		key, v   string
		top      bool
		want     Kind
		mismatch string // Declared; "" = none
	}{
		{"id", "42", true, Typed, ""},
		{"id", "-7", true, Typed, ""},
		{"id", "1 OR 1=1", true, Unknown, "integer"},
		{"id", "1 ORDER BY 3", true, Unknown, "integer"},
		{"id", "1+1", true, Unknown, "integer"},
		{"id", "1.5", true, Unknown, "integer"},
		{"id", "", true, Unknown, "integer"},
		{"price", "19.99", true, Typed, ""},
		{"price", "1e3", true, Typed, ""},
		{"price", "0x10", true, Unknown, "number"},
		{"price", "NaN", true, Unknown, "number"},
		{"paid", "true", true, Typed, ""},
		{"paid", "yes; rm -rf /", true, Unknown, "boolean"},
		{"limit", "10", true, Typed, ""},
		{"limit", "10 UNION SELECT 1", true, Unknown, "integer"},
		{"status", "open", true, Typed, ""},
		{"status", "Open", true, Unknown, "one of [open closed]"},
		{"status", "open' OR '1'='1", true, Unknown, "one of [open closed]"},
		{"level", "2", true, Typed, ""},
		{"status", "closed", true, Typed, ""},
		{"mode", "fast", true, Typed, ""},
		{"mode", "; rm -rf /", true, Unknown, ""}, // a member with command syntax: judged strictly
		{"mode", "../../etc/passwd", true, Unknown, ""},
		{"level", "4", true, Unknown, "one of [1 2 3]"},
		{"order_ref", "123e4567-e89b-12d3-a456-426614174000", true, Typed, ""},
		{"order_ref", "123e4567-e89b-12d3-a456-42661417400'", true, Unknown, "a uuid"},
		{"order_ref", "123e4567' OR 1=1--", true, Unknown, "a uuid"},
		{"day", "2026-11-28", true, Typed, ""},
		{"day", "2026-02-30", true, Unknown, "a date"},
		{"day", "2026-11-28; DROP TABLE x", true, Unknown, "a date"},
		{"at", "2026-11-28T10:05:40Z", true, Typed, ""},
		{"at", "2026-11-28t10:05:40.123+01:00", true, Typed, ""},
		{"at", "yesterday", true, Unknown, "a date-time"},
		{"email", "ann.lee+x@example.co.uk", true, Typed, ""},
		{"email", "ann@example.com<script>", true, Unknown, "an email address"},
		{"email", "a@b", true, Unknown, "an email address"},
		{"url", "https://example.com/a?b=c%20d#e", true, TypedURL, ""},
		{"url", "http://169.254.169.254/latest/meta-data/", true, TypedURL, ""},
		{"url", "https://example.com/a b", true, Unknown, "a URL"},
		{"url", "example.com", true, Unknown, "a URL"},
		{"url", "https://example.com/\"><script>", true, Unknown, "a URL"},
		{"callback", "https://hooks.example.com/x", true, TypedURL, ""},
		{"url", "mailto:ann@example.com", true, TypedURL, ""},
		{"url", "data:image/png;base64,iVBORw0KGgo=", true, TypedURL, ""},
		{"url", "https://[::1]:8080/x", true, TypedURL, ""},
		{"url", "https://user@example.com:8443/", true, TypedURL, ""},
		{"url", "javascript:alert(1)", true, Unknown, "a URL"},
		{"url", "localhost:6379", true, Unknown, "a URL"},
		{"url", "http://example.com:80x/", true, Unknown, "a URL"},
		{"url", "http:///path", true, Unknown, "a URL"},
		{"url", "1http://x/", true, Unknown, "a URL"},
		{"day", "2024-02-29", true, Typed, ""},
		{"day", "2023-02-29", true, Unknown, "a date"},
		{"day", "2026-13-01", true, Unknown, "a date"},
		{"at", "2026-11-28T24:00:00Z", true, Unknown, "a date-time"},
		{"at", "2026-11-28T10:05:40", true, Unknown, "a date-time"},
		{"at", "2026-11-28T10:05:40.5-07:00", true, Typed, ""},
		{"ids", "17", true, Typed, ""},
		{"ids", "17 AND SLEEP(5)", true, Unknown, "integer"},
		{"note", "1 OR 1=1", true, Text, ""},           // a plain string: no declaration to check
		{"mixed", "abc", true, Unknown, ""},            // a string alternative: anything goes
		{"body", "hello to the world", true, Text, ""}, // an unknown format: by key as before
		{"id", "1 OR 1=1", false, Fixed, ""},           // nested: the schema's properties do not say
	} {
		t.Run(tc.key+"="+tc.v, func(t *testing.T) {
			k, m := tool.Judge(tc.key, tc.v, tc.top)
			if k != tc.want || m.Declared != tc.mismatch {
				t.Errorf("Judge(%q, %q) = %s, %q; want %s, %q", tc.key, tc.v, k, m.Declared, tc.want, tc.mismatch)
			}
			if m.URL != (tc.mismatch == "a URL") {
				t.Errorf("Judge(%q, %q).URL = %v", tc.key, tc.v, m.URL)
			}
		})
	}
	var none *Tool
	if k, m := none.Judge("id", "1 OR 1=1", true); k != Unknown || m.Declared != "" {
		t.Errorf("nil Tool: want Unknown and no mismatch")
	}
	if k, _ := ForCall("get_order", nil).Judge("id", "x", true); k != Fixed {
		t.Errorf("no tool_info: want the key's kind")
	}
}

// TestJudgeAlternatives: parameters declared the way generated schemas write them (issue 26).
// Pydantic (the MCP Python SDK's FastMCP) writes `int | None` as anyOf integer, null, an Enum
// class as a $ref into $defs, a Literal as an enum or a const; older generators wrap a $ref
// in a one-member allOf and keep definitions. A value of the declared type is typed; text
// where the type belongs is a mismatch (the SQL probes of a typed field); an alternative that
// is a plain string, a URL, a remote or unknown $ref, or a self-reference leaves the field
// undeclared (judged by its key, as before).
func TestJudgeAlternatives(t *testing.T) {
	info := &abi.ToolInfo{Name: "get_order", InputSchema: json.RawMessage(`{"type":"object",
	"$defs": {
		"Status": {"enum":["open","closed"],"title":"Status","type":"string"},
		"Loop": {"$ref":"#/$defs/Loop"},
		"Id": {"anyOf":[{"type":"integer"},{"type":"string","format":"uuid"}]}
	},
	"properties":{
		"order_id": {"anyOf":[{"type":"integer"},{"type":"null"}],"default":null,"title":"Order Id"},
		"page": {"oneOf":[{"type":"integer"},{"type":["null"]}]},
		"status": {"$ref":"#/$defs/Status"},
		"maybe_status": {"anyOf":[{"$ref":"#/$defs/Status"},{"type":"null"}]},
		"wrapped": {"allOf":[{"$ref":"#/$defs/Status"}],"description":"the order's status"},
		"kind": {"const":"refund"},
		"mode": {"anyOf":[{"const":"fast"},{"const":"slow"}]},
		"ref": {"$ref":"#/$defs/Id"},
		"since": {"anyOf":[{"type":"string","format":"date"},{"type":"null"}]},
		"ids": {"anyOf":[{"type":"array","items":{"type":"integer"}},{"type":"null"}]},
		"size": {"anyOf":[{"type":"integer"},{"enum":["small","large"]}]},
		"query": {"anyOf":[{"type":"string"},{"type":"null"}]},
		"either": {"anyOf":[{"type":"integer"},{"type":"string"}]},
		"link": {"anyOf":[{"type":"integer"},{"type":"string","format":"uri"}]},
		"remote": {"$ref":"https://example.com/schema.json#/Status"},
		"missing": {"$ref":"#/$defs/Nope"},
		"loop": {"$ref":"#/$defs/Loop"},
		"nulls": {"anyOf":[{"type":"null"}]},
		"weird": {"mode":"x","anyOf":[{"type":"null","enum":[null,"; rm -rf /"]}]}
	}}`)}
	tool := ForCall("get_order", info)
	const byKey = NumKinds // want: not declared, so what the key alone says
	for _, tc := range []struct {
		key, v   string
		want     Kind
		mismatch string // Declared; "" = none
	}{
		{"order_id", "42", Typed, ""},
		{"order_id", "1 AND 1=1", Unknown, "integer"},
		{"order_id", "1 OR SLEEP(5)", Unknown, "integer"},
		{"order_id", "2-1", Unknown, "integer"},
		{"order_id", "1 ORDER BY 3--", Unknown, "integer"},
		{"order_id", "1; DROP TABLE orders", Unknown, "integer"},
		{"order_id", "null", Unknown, "integer"}, // an absent value is JSON null, not the string
		{"page", "3", Typed, ""},
		{"page", "3 UNION SELECT password FROM users", Unknown, "integer"},
		{"status", "open", Typed, ""},
		{"status", "open' OR '1'='1", Unknown, "one of [open closed]"},
		{"maybe_status", "closed", Typed, ""},
		{"maybe_status", "closed'--", Unknown, "one of [open closed]"},
		{"wrapped", "open", Typed, ""},
		{"wrapped", "open;select 1", Unknown, "one of [open closed]"},
		{"kind", "refund", Typed, ""},
		{"kind", "refund' or 1=1 #", Unknown, "one of [refund]"},
		{"mode", "slow", Typed, ""},
		{"mode", "fast,(select 1)", Unknown, "one of [fast] or one of [slow]"},
		{"ref", "17", Typed, ""},
		{"ref", "123e4567-e89b-12d3-a456-426614174000", Typed, ""},
		{"ref", "17' AND '1'='1", Unknown, "integer or a uuid"},
		{"since", "2026-12-01", Typed, ""},
		{"since", "2026-12-01' AND SLEEP(5)--", Unknown, "a date"},
		{"ids", "5", Typed, ""},
		{"ids", "5)) OR 1=1--", Unknown, "integer"},
		{"size", "large", Typed, ""},
		{"size", "12", Typed, ""},
		{"size", "12 procedure analyse()", Unknown, "integer or one of [small large]"},
		{"query", "1 OR 1=1", byKey, ""},  // a plain string alternative: anything goes, by key
		{"either", "1 OR 1=1", byKey, ""}, // likewise
		{"link", "1 OR 1=1", byKey, ""},   // a URL alternative: left to the URL rules, by key
		{"remote", "1 OR 1=1", byKey, ""}, // a remote $ref: nothing declared here
		{"missing", "1 OR 1=1", byKey, ""},
		{"loop", "1 OR 1=1", byKey, ""}, // a $ref to itself ends undeclared
		{"nulls", "1 OR 1=1", byKey, ""},
		{"weird", "; rm -rf /", Unknown, ""}, // an enum member with command syntax: judged strictly
	} {
		t.Run(tc.key+"="+tc.v, func(t *testing.T) {
			k, m := tool.Judge(tc.key, tc.v, true)
			if tc.want == byKey {
				tc.want = tool.Of(tc.key).ForValue(tc.v) // undeclared: the key's kind, as before
			}
			if k != tc.want || m.Declared != tc.mismatch {
				t.Errorf("Judge(%q, %q) = %s, %q; want %s, %q", tc.key, tc.v, k, m.Declared, tc.want, tc.mismatch)
			}
			if m.URL {
				t.Errorf("Judge(%q, %q).URL set; want not (no URL field here)", tc.key, tc.v)
			}
		})
	}
	// Drafts before 2019-09 keep the definitions under "definitions".
	old := ForCall("t", &abi.ToolInfo{Name: "t", InputSchema: json.RawMessage(`{"definitions":{"S":{"type":"string","enum":["a","b"]}},
		"properties":{"s":{"allOf":[{"$ref":"#/definitions/S"}]}}}`)})
	if k, m := old.Judge("s", "a", true); k != Typed || m.Declared != "" {
		t.Errorf("definitions: Judge(s, a) = %s, %q; want typed", k, m.Declared)
	}
	if k, m := old.Judge("s", "a' or 'x'='x", true); k != Unknown || m.Declared != "one of [a b]" {
		t.Errorf("definitions: Judge(s, a' or 'x'='x) = %s, %q; want a mismatch", k, m.Declared)
	}
}

// TestJudgeNested: an object parameter's members are declared by its properties (a Pydantic
// model passed as one argument is a $ref to an object in $defs; an optional one an anyOf of it
// and null; a list of them an array whose items are it). Members of an object the schema does
// not declare, or of one with two shapes, are judged by key; a schema that refers to itself
// ends undeclared after maxRefDepth levels (det75).
func TestJudgeNested(t *testing.T) {
	info := &abi.ToolInfo{Name: "search_orders", InputSchema: json.RawMessage(`{"type":"object",
	"$defs": {
		"Status": {"enum":["open","closed"],"type":"string"},
		"Filter": {"type":"object","properties":{
			"customer_id":{"type":"integer"},
			"status":{"$ref":"#/$defs/Status"},
			"note":{"type":"string"},
			"range":{"type":"object","properties":{"from":{"type":"string","format":"date"}}}}},
		"Node": {"type":"object","properties":{"n":{"type":"integer"},"child":{"$ref":"#/$defs/Node"}}}
	},
	"properties":{
		"filter": {"$ref":"#/$defs/Filter"},
		"maybe": {"anyOf":[{"$ref":"#/$defs/Filter"},{"type":"null"}]},
		"many": {"type":"array","items":{"$ref":"#/$defs/Filter"}},
		"either": {"anyOf":[{"$ref":"#/$defs/Filter"},{"type":"object","properties":{"customer_id":{"type":"string"}}}]},
		"free": {"type":"object"},
		"tree": {"$ref":"#/$defs/Node"}
	}}`)}
	tool := ForCall("search_orders", info)
	root := tool.Root()
	for _, tc := range []struct {
		name     string
		d        Decl
		key, v   string
		want     Kind
		mismatch string
	}{
		{"a model's integer", root.Object("filter"), "customer_id", "42", Typed, ""},
		{"a boolean tail in a model's integer", root.Object("filter"), "customer_id", "42 AND 1=1", Unknown, "integer"},
		{"a model's enum", root.Object("filter"), "status", "open", Typed, ""},
		{"a break-out in a model's enum", root.Object("filter"), "status", "open' OR '1'='1", Unknown, "one of [open closed]"},
		{"a model's plain string", root.Object("filter"), "note", "please leave it at the door", Text, ""},
		{"two levels down", root.Object("filter").Object("range"), "from", "2026-12-01", Typed, ""},
		{"a delay two levels down", root.Object("filter").Object("range"), "from", "2026-12-01' AND SLEEP(5)--", Unknown, "a date"},
		{"an optional model", root.Object("maybe"), "customer_id", "7 ORDER BY 3", Unknown, "integer"},
		{"a list of models", root.Object("many"), "customer_id", "7", Typed, ""},
		{"a probe in a list of models", root.Object("many"), "customer_id", "7;SELECT 1", Unknown, "integer"},
		{"two shapes: by key", root.Object("either"), "customer_id", "7 ORDER BY 3", Fixed, ""},
		{"an object without properties: by key", root.Object("free"), "customer_id", "7 ORDER BY 3", Fixed, ""},
		{"the root does not declare a nested member", root, "customer_id", "7 ORDER BY 3", Fixed, ""},
		{"an undeclared nested object: by key", root.Object("nope"), "customer_id", "7 ORDER BY 3", Fixed, ""},
		{"a recursive model", root.Object("tree").Object("child").Object("child"), "n", "3", Typed, ""},
		{"a recursive model ends undeclared", root.Object("tree").Object("child").Object("child").Object("child").Object("child").Object("child").Object("child").Object("child").Object("child").Object("child"), "n", "3 OR 1=1", Unknown, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k, m := tool.JudgeIn(tc.d, tc.key, tc.v)
			if k != tc.want || m.Declared != tc.mismatch {
				t.Errorf("JudgeIn(%q, %q) = %s, %q; want %s, %q", tc.key, tc.v, k, m.Declared, tc.want, tc.mismatch)
			}
		})
	}
	var none *Tool
	if k, m := none.JudgeIn(none.Root().Object("filter"), "customer_id", "1 OR 1=1"); k != Unknown || m.Declared != "" {
		t.Errorf("nil Tool: %s %q; want Unknown and no mismatch", k, m.Declared)
	}
}

// TestObjectBudget: a schema that fans out and refers to itself builds a bounded number of
// object declarations (maxObjects).
func TestObjectBudget(t *testing.T) {
	props := ""
	for i := range 10 {
		if i > 0 {
			props += ","
		}
		props += fmt.Sprintf(`"c%d":{"$ref":"#/$defs/N"}`, i)
	}
	info := &abi.ToolInfo{Name: "t", InputSchema: json.RawMessage(`{"$defs":{"N":{"type":"object","properties":{` + props + `,"n":{"type":"integer"}}}},"properties":{"root":{"$ref":"#/$defs/N"}}}`)}
	tool := ForCall("t", info)
	n := 0
	var count func(o *object)
	count = func(o *object) {
		if o == nil {
			return
		}
		n++
		for _, c := range o.objs {
			count(c)
		}
	}
	count(tool.root)
	if n > maxObjects+1 {
		t.Errorf("%d object declarations built, want at most %d", n, maxObjects+1)
	}
	if k, _ := tool.JudgeIn(tool.Root().Object("root"), "n", "1"); k != Typed {
		t.Errorf("the first level is declared: got %s", k)
	}
}

// TestFieldVisitBudget: alternatives that refer to alternatives fan out; three levels of 300
// $refs (a schema of about 20 KB) would be 27 million reads for one property. Past
// maxFieldVisits the property declares nothing (judged by key), and a narrow union as deep
// stays typed.
func TestFieldVisitBudget(t *testing.T) {
	defs := ""
	for d := range 3 {
		refs := ""
		for i := range 300 {
			if i > 0 {
				refs += ","
			}
			refs += fmt.Sprintf(`{"$ref":"#/$defs/D%d"}`, d+1)
		}
		defs += fmt.Sprintf(`"D%d":{"anyOf":[%s]},`, d, refs)
	}
	defs += `"D3":{"type":"integer"},"N0":{"anyOf":[{"$ref":"#/$defs/N1"},{"type":"null"}]},` +
		`"N1":{"anyOf":[{"$ref":"#/$defs/N2"},{"type":"null"}]},"N2":{"anyOf":[{"$ref":"#/$defs/N3"},{"type":"null"}]},` +
		`"N3":{"type":"integer"}`
	info := &abi.ToolInfo{Name: "t", InputSchema: json.RawMessage(`{"$defs":{` + defs + `},"properties":{` +
		`"wide":{"$ref":"#/$defs/D0"},"narrow":{"$ref":"#/$defs/N0"}}}`)}
	tool := ForCall("t", info)
	if _, ok := tool.root.fields["wide"]; ok {
		t.Errorf("a property whose alternatives fan out past %d reads is declared", maxFieldVisits)
	}
	if k, _ := tool.Judge("narrow", "7", true); k != Typed {
		t.Errorf("narrow union: got %s, want typed", k)
	}
	if k, d := tool.Judge("narrow", "7 OR 1=1", true); k == Typed || d.Declared != "integer" {
		t.Errorf("narrow union, SQL tail: got %s %q, want a mismatch", k, d.Declared)
	}
}

func TestTypedLabels(t *testing.T) {
	for _, l := range []string{"sql_injection", "prompt_injection", "ssrf", "xss"} {
		if Typed.Applies(l) {
			t.Errorf("Typed applies %s; want none", l)
		}
	}
	if !TypedURL.Applies("ssrf") || !TypedURL.Applies("prompt_injection") || TypedURL.Applies("path_traversal") || TypedURL.Applies("sql_injection") {
		t.Errorf("TypedURL: want ssrf and prompt_injection only")
	}
	if Typed.String() != "typed" || TypedURL.String() != "typed_url" || NumKinds.String() != "unknown" {
		t.Errorf("names: %s %s %s", Typed, TypedURL, NumKinds)
	}
}

// FuzzJudge: Judge never panics, and a value it calls typed conforms to what the schema
// declares for its field (checked again by hand for the integer field).
func FuzzJudge(f *testing.F) {
	info := &abi.ToolInfo{Name: "t", InputSchema: json.RawMessage(`{"type":"object","properties":{"id":{"type":"integer"},"n":{"type":"number"},"s":{"enum":["a","b"]},"u":{"format":"uuid"},"d":{"format":"date"},"t":{"format":"date-time"},"e":{"format":"email"},"url":{"format":"uri"}}}`)}
	tool := ForCall("t", info)
	for _, s := range []string{"42", "-1", "1 OR 1=1", "1e5", "a", "b'", "123e4567-e89b-12d3-a456-426614174000", "2026-02-29", "2026-11-28T10:00:00Z", "a@b.co", "http://x/%zz", "https://[::1]:80/", "", "\x00", "９"} {
		for _, k := range []string{"id", "n", "s", "u", "d", "t", "e", "url"} {
			f.Add(k, s)
		}
	}
	f.Fuzz(func(t *testing.T, key, v string) {
		k, m := tool.Judge(key, v, true)
		if k == Typed && m.Declared != "" || k == TypedURL && m.Declared != "" {
			t.Fatalf("Judge(%q, %q) = %s with a mismatch %q", key, v, k, m.Declared)
		}
		if key == "id" && (k == Typed) != isInteger(v) {
			t.Fatalf("Judge(id, %q) = %s, isInteger %v", v, k, isInteger(v))
		}
	})
}
