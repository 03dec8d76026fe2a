package detect

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/added060/palisade/plugins/internal/argkind"
	"github.com/added060/palisade/sdk/go/abi"
)

// EvaluateInput evaluates the stage's input, a view (sdk/ABI.md "The view") or the JSON
// envelope, and returns the verdict as JSON. The two give the same verdict for the same
// message (TestViewVerdictsMatch).
func (e *Evaluator) EvaluateInput(in []byte) ([]byte, error) {
	if !abi.IsView(in) {
		return e.EvaluateJSON(in)
	}
	v, err := abi.ParseView(in)
	if err != nil {
		return nil, fmt.Errorf("injection: %w", err)
	}
	verdict, err := e.EvaluateView(v)
	if err != nil {
		return nil, err
	}
	return encodeVerdict(verdict)
}

// EvaluateView is Evaluate on a view: the same leaves, in the same order, read from the host's
// layout instead of parsed out of the JSON envelope.
func (e *Evaluator) EvaluateView(v abi.View) (abi.Verdict, error) {
	phase := v.Get(abi.FieldPhase)
	method := v.Get(abi.FieldMethod)
	call := isCall(method)
	if depth := v.Depth(); depth > MaxNesting {
		return abi.Verdict{Action: abi.ActionNone, Incomplete: true, Rule: "injection/nesting",
			Reason: fmt.Sprintf("envelope nested %d levels deep (limit %d): not scanned", depth, MaxNesting)}, nil
	}
	var leafBuf [8]leaf // most messages carry a few strings: no allocation for them
	leaves := leafBuf[:0]
	d := e.request
	w := viewWalker{v: v}
	if r, ok := v.Root(abi.PartArguments); ok {
		w.args, w.hasArgs = r.Node, true
	}
	root := func(part int) (uint32, bool) {
		r, ok := v.Root(part)
		return r.Node, ok
	}
	// member is gjson's Get of one key on a node: the first member of that name of an object.
	member := func(n uint32, ok bool, name string) (uint32, bool) {
		if !ok {
			return 0, false
		}
		return v.Member(n, name)
	}
	str := func(n uint32, ok bool) (string, bool) {
		if !ok {
			return "", false
		}
		node := v.Node(n)
		return node.Value, node.Type == abi.NodeString
	}
	// items is gjson's Array: an array's items, a lone value as itself, nothing for null.
	items := func(n uint32, ok bool, fn func(i int, n uint32)) {
		if !ok {
			return
		}
		node := v.Node(n)
		switch node.Type {
		case abi.NodeNull:
		case abi.NodeArray:
			i := 0
			for c := n + 1; c < node.End; c = v.Node(c).End {
				fn(i, c)
				i++
			}
		default:
			fn(0, n)
		}
	}
	if phase == abi.PhaseResponse {
		d = e.response
		res, hasRes := root(abi.PartResult)
		outKind := argkind.Unknown
		if call && w.hasArgs {
			info, _ := v.Field(abi.FieldToolInfo)
			args := v.Node(w.args)
			if args.Type == abi.NodeObject && readsSource(e.tools.ForCall(v.Get(abi.FieldTool), info), func(yield func(k, v string)) {
				for c := w.args + 1; c < args.End; c = w.v.Node(c).End {
					if n := w.v.Node(c); n.Type == abi.NodeString {
						yield(n.Name, n.Value)
					}
				}
			}) {
				outKind = argkind.Code
			}
		}
		if !call {
			leaves = w.collect(res, hasRes, "result", nil, leaves)
		}
		if call {
			c, ok := member(res, hasRes, "content")
			items(c, ok, func(i int, n uint32) {
				if t, ok := str(member(n, true, "text")); ok {
					leaves = append(leaves, leaf{path: itemPath(&contentPaths, "result.content[", i), text: t, kind: outKind})
				}
			})
			c, ok = member(res, hasRes, "contents")
			items(c, ok, func(i int, n uint32) {
				if t, ok := str(member(n, true, "text")); ok {
					leaves = append(leaves, leaf{path: itemPath(&contentsPaths, "result.contents[", i), text: t, kind: outKind})
				}
			})
			sc, ok := member(res, hasRes, "structuredContent")
			leaves = w.collect(sc, ok, "result.structuredContent", nil, leaves)
			if method == "prompts/get" {
				m, ok := member(res, hasRes, "messages")
				leaves = w.collect(m, ok, "result.messages", nil, leaves)
			}
		}
		if en, ok := root(abi.PartError); ok {
			if m, ok := str(member(en, true, "message")); ok {
				leaves = append(leaves, leaf{path: "error.message", text: m})
			}
			dn, ok := member(en, true, "data")
			leaves = w.collect(dn, ok, "error.data", nil, leaves)
		}
	} else if call {
		toolName := v.Get(abi.FieldTool)
		info, _ := v.Field(abi.FieldToolInfo)
		tool := e.tools.ForCall(toolName, info)
		leaves = w.collect(w.args, w.hasArgs, "arguments", tool, leaves)
		writtenInto(leaves)
		leaves = callLeaves(leaves, toolName, v.Get(abi.FieldCwd)) // delete.go
		if codeSearchTool(toolName) {
			for i := range leaves {
				leaves[i].codeSearch = true
			}
		}
		if u, ok := v.Field(abi.FieldURI); ok {
			leaves = append(leaves, leaf{path: "uri", text: u, kind: argkind.URL})
		}
		p, ok := root(abi.PartParams)
		mt, ok := member(p, ok, "_meta")
		leaves = w.collect(mt, ok, "params._meta", nil, leaves)
	} else {
		d = e.response
		p, ok := root(abi.PartParams)
		leaves = w.collect(p, ok, "params", nil, leaves)
	}
	return e.decide(message{phase: phase, call: call,
		names: func() (string, string) { return v.Get(abi.FieldServer), v.Get(abi.FieldTool) },
		result: func() []byte {
			r, ok := v.Root(abi.PartResult)
			if !ok {
				return []byte("{}")
			}
			return []byte(`{"result":` + r.Raw + `}`)
		}}, d, leaves)
}

// viewWalker collects leaves from a view's nodes.
type viewWalker struct {
	v       abi.View
	args    uint32 // the arguments part's root node, which params.arguments may alias
	hasArgs bool
}

// collect is collectStrings on a view's node n (ok false: absent): the same leaves, in the same
// order, with the same paths.
func (w viewWalker) collect(n uint32, ok bool, path string, tool *argkind.Tool, out []leaf) []leaf {
	if !ok {
		return out
	}
	type item struct {
		n    uint32
		path string
		key  string
		decl argkind.Decl // what the schema declares for the members of the object holding it
		root bool
	}
	stack := []item{{n, path, "", argkind.Decl{}, true}}
	join := func(p, s string) string {
		if len(p) > maxPathBytes {
			if strings.HasSuffix(p, "…") {
				return p
			}
			return p + "…"
		}
		return p + s
	}
	v := w.v
	aliased := false
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		node := v.Node(it.n)
		if node.Type == abi.NodeAlias {
			// params.arguments, byte for byte the arguments part: walk that part here, once
			// (a view whose arguments held an alias would otherwise walk itself forever).
			if !w.hasArgs || aliased {
				continue
			}
			aliased = true
			it.n, node = w.args, v.Node(w.args)
		}
		switch node.Type {
		case abi.NodeString:
			kind, mm := tool.JudgeIn(it.decl, it.key, node.Value)
			out = append(out, leaf{path: it.path, text: node.Value, kind: kind, mismatch: mm})
		case abi.NodeArray:
			base := len(stack)
			i := 0
			for c := it.n + 1; c < node.End; c = v.Node(c).End {
				stack = append(stack, item{c, join(it.path, "["+strconv.Itoa(i)+"]"), it.key, it.decl, false})
				i++
			}
			reverse(stack[base:])
		case abi.NodeObject:
			base := len(stack)
			decl := it.decl.Object(it.key) // what the schema declares for this object's members
			if it.root {
				decl = tool.Root()
			}
			for c := it.n + 1; c < node.End; c = v.Node(c).End {
				ks := v.Node(c).Name
				kp := join(it.path, "."+ks)
				if ks != "" {
					out = append(out, leaf{path: kp + "{key}", text: ks})
				}
				stack = append(stack, item{c, kp, ks, decl, false})
			}
			reverse(stack[base:])
		}
	}
	return out
}

func reverse[T any](s []T) {
	for i, j := 0, len(s)-1; i < j; i, j = i+1, j-1 {
		s[i], s[j] = s[j], s[i]
	}
}

// contentPaths and contentsPaths are the first items' paths, built once.
var contentPaths, contentsPaths [8]string

func init() {
	for i := range contentPaths {
		contentPaths[i] = "result.content[" + strconv.Itoa(i) + "].text"
		contentsPaths[i] = "result.contents[" + strconv.Itoa(i) + "].text"
	}
}

// itemPath is prefix + i + "].text", from built if it holds item i.
func itemPath(built *[8]string, prefix string, i int) string {
	if i < len(built) {
		return built[i]
	}
	return prefix + strconv.Itoa(i) + "].text"
}
