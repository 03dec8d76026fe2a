package scan

import (
	"strconv"
	"strings"

	"github.com/added060/palisade/plugins/internal/argkind"
	"github.com/added060/palisade/sdk/go/abi"
)

// tools keeps the last call's argument classifier: within a plugin instance, consecutive calls
// of the same tool reuse it instead of parsing the tool's input schema again.
var tools argkind.Cache

// viewTexts is texts on a view (sdk/ABI.md "The view"): the same texts, in the same order,
// with the same paths and kinds, read from the host's layout instead of parsed out of the JSON
// envelope (TestViewTextsMatch).
func viewTexts(v abi.View, c Config) ([]Text, bool, head) {
	col := &collector{c: c, kind: argkind.Unknown}
	var tool *argkind.Tool
	forModel := false
	args, hasArgs := v.Root(abi.PartArguments)
	type item struct {
		path, key string
		n         uint32
		decl      argkind.Decl // what the schema declares for the members of the object holding it
		root      bool
	}
	stack := make([]item, 0, 16) // on the goroutine's stack unless a message nests deeper
	walk := func(path string, n uint32, ok bool) {
		if !ok {
			return
		}
		stack = append(stack[:0], item{path, "", n, argkind.Decl{}, true})
		aliased := false
		for len(stack) > 0 {
			it := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			node := v.Node(it.n)
			if node.Type == abi.NodeAlias {
				// params.arguments, byte for byte the arguments part: walk that part here,
				// once (an alias inside it would otherwise walk it forever).
				if !hasArgs || aliased {
					continue
				}
				aliased = true
				it.n, node = args.Node, v.Node(args.Node)
			}
			switch node.Type {
			case abi.NodeString:
				col.kind, _ = tool.JudgeIn(it.decl, it.key, node.Value)
				if col.kind == argkind.Typed {
					continue
				}
				if forModel {
					col.kind = argkind.Text.ForValue(node.Value)
				}
				col.add(it.path, node.Value)
			case abi.NodeArray:
				base, i := len(stack), 0
				for ch := it.n + 1; ch < node.End; ch = v.Node(ch).End {
					stack = append(stack, item{pathJoin(it.path, "."+strconv.Itoa(i)), it.key, ch, it.decl, false})
					i++
				}
				reverse(stack[base:])
			case abi.NodeObject:
				base := len(stack)
				decl := it.decl.Object(it.key) // what the schema declares for this object's members
				if it.root {
					decl = tool.Root()
				}
				for ch := it.n + 1; ch < node.End; ch = v.Node(ch).End {
					name := v.Node(ch).Name
					if strings.HasPrefix(it.path, "result") && structural[name] {
						continue // MCP content metadata, not text
					}
					kp := pathJoin(it.path, "."+name)
					if !identifier(name) {
						col.kind = argkind.Unknown
						col.add(kp+"{key}", name)
					}
					stack = append(stack, item{kp, name, ch, decl, false})
				}
				reverse(stack[base:])
			}
		}
	}
	root := func(part int) (uint32, bool) {
		r, ok := v.Root(part)
		return r.Node, ok
	}
	phase, method := v.Get(abi.FieldPhase), v.Get(abi.FieldMethod)
	h := head{phase: phase, method: method, server: v.Get(abi.FieldServer), tool: v.Get(abi.FieldTool)}
	call := isCall(method)
	if phase != abi.PhaseResponse && !call {
		forModel = true
		col.page = true
		p, ok := root(abi.PartParams)
		walk("params", p, ok)
		return col.out, col.skipped, h
	}
	if phase != abi.PhaseResponse {
		if !c.noKinds {
			info, _ := v.Field(abi.FieldToolInfo)
			tool = tools.ForCall(h.tool, info)
		}
		walk("arguments", args.Node, hasArgs)
		if u, ok := v.Field(abi.FieldURI); ok {
			// A resource's uri: a well-formed one is a typed URL (see textsJSON).
			col.kind = argkind.URL
			if argkind.WellFormedURL(u) {
				col.kind = argkind.TypedURL
			}
			col.add("uri", u)
		}
		tool = nil
		if p, ok := root(abi.PartParams); ok {
			m, ok := v.Member(p, "_meta")
			walk("params._meta", m, ok)
		}
	}
	// The response phase reads the tool output only (see textsJSON).
	forModel = true
	col.page = true
	r, ok := root(abi.PartResult)
	walk("result", r, ok)
	return col.out, col.skipped, h
}

func reverse[T any](s []T) {
	for i, j := 0, len(s)-1; i < j; i, j = i+1, j-1 {
		s[i], s[j] = s[j], s[i]
	}
}
