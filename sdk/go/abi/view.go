package abi

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// The view (sdk/ABI.md "The view") is the envelope laid out once by the host for every stage
// that asks for it in describe (`"input": "view"`): its header fields, and every value of its
// arguments, params, result and error as a flat table of nodes in document order, with each
// string already unescaped. A plugin walks it with no JSON parser and no allocation. Both sides
// use this file, so the encoder and the decoder cannot drift apart.
//
//	header  "\x00PVW", u16 version, u16 flags, u32 total, u32 depth,
//	        u32 field count, u32 fields offset, u32 root count, u32 roots offset,
//	        u32 node count, u32 nodes offset                                       (40 bytes)
//	        layout 2 only: u32 prior count, u32 prior offset                       (+8 bytes)
//	field   u16 id, u16 0, u32 off, u32 len                                        (12 bytes)
//	root    u16 part, u16 0, u32 node, u32 raw off, u32 raw len                    (16 bytes)
//	node    u8 type, u8 flags, u16 0, u32 parent, u32 end, u32 index,
//	        u32 name off, u32 name len, u32 key off, u32 key len, u32 val off, u32 val len (40 bytes)
//	prior   u32 stage off, u32 stage len, u32 action off, u32 action len, f64 score,
//	        u32 rule off, u32 rule len, u32 reason off, u32 reason len,
//	        u32 guidance off, u32 guidance len, u32 label count, u32 labels offset     (56 bytes)
//	label   u32 off, u32 len                                                       (8 bytes)

// View layouts: numbers of their own, apart from the envelope schema (Version) and the call
// convention (sdk/ABI.md "Versions").
const (
	// ViewLayout1 is the envelope laid out: header fields and parts.
	ViewLayout1 = 1
	// ViewLayout2 is layout 1 plus the prior table: the verdicts of the stages that ran
	// earlier for the message (the envelope's prior). A plugin that reads no earlier verdicts
	// declares layout 1, and so runs on hosts that speak only layout 1.
	ViewLayout2 = 2
	// ViewVersion is the newest layout this package encodes and decodes; it decodes every
	// layout from 1 up.
	ViewVersion = ViewLayout2
)

// ViewMagic starts every view; a JSON envelope never starts with a NUL byte.
const ViewMagic = "\x00PVW"

// Sizes of the view's fixed parts.
const (
	viewHeaderSize  = 40 // layout 1
	viewHeader2Size = 48 // layout 2; AppendView leaves layout 1's tables after 48 bytes too
	viewPriorSize   = 56
	viewLabelSize   = 8
	viewFieldSize   = 12
	viewRootSize    = 16
	viewNodeSize    = 40
)

// ViewNone is a node's Parent when it has none (a root).
const ViewNone = math.MaxUint32

// Node types.
const (
	NodeObject = 1
	NodeArray  = 2
	NodeString = 3
	NodeNumber = 4
	NodeTrue   = 5
	NodeFalse  = 6
	NodeNull   = 7
	// NodeAlias stands for a member whose value is byte for byte another part: params'
	// `arguments` member of a call, when it equals the envelope's `arguments`. Value names the
	// part ("arguments"); the part's own nodes hold the values.
	NodeAlias = 8
)

// Node flags.
const (
	NodeMember = 1 << 0 // a member of an object: Name is its name
	NodeItem   = 1 << 1 // an item of an array: Index is its position
	// NodeTop marks a member of a part's root object, or an item, at any depth of arrays, of
	// one: what a tool's input schema declares as a property (plugins/internal/argkind).
	NodeTop = 1 << 2
)

// Parts: the subtrees of the envelope the view lays out as nodes.
const (
	PartArguments = 1
	PartParams    = 2
	PartResult    = 3
	PartError     = 4
)

// partNames are the envelope member names of the parts, by part number.
var partNames = [...]string{PartArguments: "arguments", PartParams: "params", PartResult: "result", PartError: "error"}

// PartName returns the envelope member a part lays out ("arguments", ...), "" for an unknown part.
func PartName(part int) string {
	if part <= 0 || part >= len(partNames) {
		return ""
	}
	return partNames[part]
}

// Field ids: the header strings a view carries, each present only when the envelope has it.
// Repeated fields (FieldEnginePath, FieldEnginePid) appear once per element, in order.
const (
	FieldABI             = 1
	FieldID              = 2
	FieldPhase           = 3
	FieldTime            = 4
	FieldTransport       = 5
	FieldMethod          = 6
	FieldRequestID       = 7 // raw JSON (a number or a string, as the client sent it)
	FieldServer          = 8
	FieldSession         = 9
	FieldProtocolVersion = 10
	FieldClientName      = 11
	FieldClientVersion   = 12
	FieldAgent           = 13
	FieldCwd             = 14
	FieldTool            = 15
	FieldURI             = 16
	FieldPrompt          = 17
	FieldToolName        = 20 // tool_info.name
	FieldToolDescription = 21 // tool_info.description
	FieldToolInputSchema = 22 // tool_info.input_schema, raw JSON
	FieldToolBuiltIn     = 23 // "true" when tool_info.built_in is true
	FieldToolInfo        = 24 // tool_info, raw JSON (present whenever tool_info is an object)
	FieldEngineBinary    = 30
	FieldEngineHome      = 31
	FieldEnginePath      = 32 // repeated
	FieldEnginePid       = 33 // repeated, the JSON number's literal
	FieldEngine          = 34 // engine, raw JSON (present whenever engine is an object)
	FieldPrincipal       = 40 // raw JSON
)

// Inputs a plugin can ask for in describe's input.
const (
	InputEnvelope = "envelope"
	InputView     = "view"
)

// CheckInput checks describe's input and view against what this host speaks: the envelope, or
// the view in a layout from 1 to ViewVersion. The error names the version, in words an operator
// can act on.
func CheckInput(d Describe) error {
	switch d.Input {
	case "", InputEnvelope:
		if d.View != 0 {
			return fmt.Errorf("describe: view %d without input %q", d.View, InputView)
		}
		return nil
	case InputView:
		switch {
		case d.View >= ViewLayout1 && d.View <= ViewVersion:
			return nil
		case d.View > ViewVersion:
			return fmt.Errorf("plugin asks for view layout %d; this host speaks view layouts 1 to %d: upgrade the gateway", d.View, ViewVersion)
		}
		return fmt.Errorf("plugin asks for view layout %d; this host speaks view layouts 1 to %d", d.View, ViewVersion)
	}
	return fmt.Errorf("plugin asks for input %q; this host gives %q or %q", d.Input, InputEnvelope, InputView)
}

// ErrView is wrapped by every error ParseView returns.
var ErrView = errors.New("abi: bad view")

// View is a decoded view: accessors over the bytes ParseView checked. Its strings alias those
// bytes (no copies): they are valid as long as the bytes are, which inside a plugin is until
// evaluate returns. Copy what you keep.
type View struct {
	s      string // the view's bytes
	layout uint32
	depth  uint32
	np, po uint32 // prior count, offset (layout 2)
	nf, fo uint32 // field count, offset
	nr, ro uint32 // root count, offset
	nn, no uint32 // node count, offset
}

// Node is one value of a part.
type Node struct {
	Type   uint8
	Flags  uint8
	Parent uint32 // index of the enclosing object or array; ViewNone for a root
	End    uint32 // one past the last node of this node's subtree (children are Index+1 .. End-1)
	Index  uint32 // position in the enclosing array (NodeItem)
	// Name is the member's name (NodeMember), unescaped.
	Name string
	// Key is the nearest member name at or above the node: its own Name for a member, its
	// array's Key for an item, "" for a root.
	Key string
	// Value is a string's unescaped bytes, a number's or literal's JSON text, or an object's or
	// array's raw JSON; for NodeAlias, the name of the part it stands for.
	Value string
}

// Root is one part laid out in a view.
type Root struct {
	Part int    // PartArguments, ...
	Node uint32 // index of its root node
	Raw  string // the part's JSON, as the envelope carries it
}

// IsView reports whether b starts with the view's magic (and so is not a JSON envelope).
func IsView(b []byte) bool { return len(b) >= 4 && string(b[:4]) == ViewMagic }

// u16 and u32 check their last byte once (the binary.LittleEndian idiom), so the compiler merges the
// loads into one where it can (issue 27: a guest reads the view's tables on every call).
func u16(s string, off uint32) uint32 {
	b := s[off:]
	_ = b[1]
	return uint32(b[0]) | uint32(b[1])<<8
}

func u32(s string, off uint32) uint32 {
	b := s[off:]
	_ = b[3]
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

// ParseView checks b as a view of any layout from 1 to ViewVersion and returns accessors over
// it. Every offset, length, index and type is checked once here, so the accessors never fail.
// The error names what is wrong and wraps ErrView. b must not change while the View is in use.
func ParseView(b []byte) (View, error) {
	var v View
	if len(b) < viewHeaderSize {
		return v, fmt.Errorf("%w: %d bytes, shorter than the %d-byte header", ErrView, len(b), viewHeaderSize)
	}
	if len(b) > math.MaxUint32 {
		return v, fmt.Errorf("%w: %d bytes, more than 4 GiB", ErrView, len(b))
	}
	s := unsafe.String(unsafe.SliceData(b), len(b))
	if s[:4] != ViewMagic {
		return v, fmt.Errorf("%w: no magic (not a view)", ErrView)
	}
	ver := u16(s, 4)
	if ver < ViewLayout1 || ver > ViewVersion {
		return v, fmt.Errorf("%w: layout version %d, this decoder reads 1 to %d", ErrView, ver, ViewVersion)
	}
	header := uint64(viewHeaderSize)
	if ver >= ViewLayout2 {
		header = viewHeader2Size
		if len(b) < viewHeader2Size {
			return v, fmt.Errorf("%w: %d bytes, shorter than the %d-byte header of layout %d", ErrView, len(b), viewHeader2Size, ver)
		}
	}
	if total := u32(s, 8); uint64(total) != uint64(len(b)) {
		return v, fmt.Errorf("%w: header says %d bytes, have %d", ErrView, total, len(b))
	}
	v = View{s: s, layout: ver, depth: u32(s, 12), nf: u32(s, 16), fo: u32(s, 20), nr: u32(s, 24), ro: u32(s, 28), nn: u32(s, 32), no: u32(s, 36)}
	if ver >= ViewLayout2 {
		v.np, v.po = u32(s, 40), u32(s, 44)
	}
	n := uint64(len(b))
	table := func(what string, count, off uint32, size uint64) error {
		if uint64(off) < header || uint64(off)+uint64(count)*size > n {
			return fmt.Errorf("%w: %s table (%d at %d) outside the view", ErrView, what, count, off)
		}
		return nil
	}
	if err := table("field", v.nf, v.fo, viewFieldSize); err != nil {
		return View{}, err
	}
	if err := table("root", v.nr, v.ro, viewRootSize); err != nil {
		return View{}, err
	}
	if err := table("node", v.nn, v.no, viewNodeSize); err != nil {
		return View{}, err
	}
	if ver >= ViewLayout2 {
		if err := table("prior", v.np, v.po, viewPriorSize); err != nil {
			return View{}, err
		}
	}
	span := func(off, ln uint32) bool { return uint64(off)+uint64(ln) <= n }
	for i := uint32(0); i < v.nf; i++ {
		at := v.fo + i*viewFieldSize
		if !span(u32(s, at+4), u32(s, at+8)) {
			return View{}, fmt.Errorf("%w: field %d (id %d) outside the view", ErrView, i, u16(s, at))
		}
	}
	for i := uint32(0); i < v.nn; i++ {
		at := v.no + i*viewNodeSize
		typ, parent, end := s[at], u32(s, at+4), u32(s, at+8)
		if typ < NodeObject || typ > NodeAlias {
			return View{}, fmt.Errorf("%w: node %d: unknown type %d", ErrView, i, typ)
		}
		if end <= i || end > v.nn {
			return View{}, fmt.Errorf("%w: node %d: subtree end %d out of range", ErrView, i, end)
		}
		if typ != NodeObject && typ != NodeArray && end != i+1 {
			return View{}, fmt.Errorf("%w: node %d: a scalar with children", ErrView, i)
		}
		if parent != ViewNone {
			if parent >= i {
				return View{}, fmt.Errorf("%w: node %d: parent %d does not precede it", ErrView, i, parent)
			}
			pat := v.no + parent*viewNodeSize
			if pt := s[pat]; pt != NodeObject && pt != NodeArray {
				return View{}, fmt.Errorf("%w: node %d: parent %d is not an object or array", ErrView, i, parent)
			}
			if end > u32(s, pat+8) {
				return View{}, fmt.Errorf("%w: node %d: subtree ends past its parent's", ErrView, i)
			}
		}
		for k := uint32(16); k < 40; k += 8 {
			if !span(u32(s, at+k), u32(s, at+k+4)) {
				return View{}, fmt.Errorf("%w: node %d: string outside the view", ErrView, i)
			}
		}
	}
	for i := uint32(0); i < v.nr; i++ {
		at := v.ro + i*viewRootSize
		node := u32(s, at+4)
		if node >= v.nn || u32(s, v.no+node*viewNodeSize+4) != ViewNone {
			return View{}, fmt.Errorf("%w: root %d (part %d): node %d is not a root node", ErrView, i, u16(s, at), node)
		}
		if !span(u32(s, at+8), u32(s, at+12)) {
			return View{}, fmt.Errorf("%w: root %d (part %d): raw JSON outside the view", ErrView, i, u16(s, at))
		}
	}
	for i := uint32(0); i < v.np; i++ {
		at := v.po + i*viewPriorSize
		for _, k := range [...]uint32{0, 8, 24, 32, 40} {
			if !span(u32(s, at+k), u32(s, at+k+4)) {
				return View{}, fmt.Errorf("%w: prior %d: string outside the view", ErrView, i)
			}
		}
		nl, lo := u32(s, at+48), u32(s, at+52)
		if uint64(lo) < header || uint64(lo)+uint64(nl)*viewLabelSize > n {
			// table's check, without formatting its name on every call.
			return View{}, fmt.Errorf("%w: prior %d: label table (%d at %d) outside the view", ErrView, i, nl, lo)
		}
		for j := uint32(0); j < nl; j++ {
			if !span(u32(s, lo+j*viewLabelSize), u32(s, lo+j*viewLabelSize+4)) {
				return View{}, fmt.Errorf("%w: prior %d: label %d outside the view", ErrView, i, j)
			}
		}
	}
	return v, nil
}

// Layout is the view's layout version (ViewLayout1, ViewLayout2).
func (v View) Layout() int { return int(v.layout) }

// HasPrior reports whether the view carries the prior table (layout 2 and up), possibly
// empty. A plugin that judges by earlier verdicts MUST fail the call on a view without it: the
// host that sent it did not say what the earlier stages decided.
func (v View) HasPrior() bool { return v.layout >= ViewLayout2 }

// NumPrior is the number of earlier verdicts (0 without a prior table).
func (v View) NumPrior() int { return int(v.np) }

// ViewPrior is one earlier verdict of a view: the envelope's prior[i]. Its strings alias the
// view's bytes, like every string of a View.
type ViewPrior struct {
	Stage  string
	Action string
	// Score is the verdict's score; 0 where the JSON prior leaves score out.
	Score    float64
	Rule     string
	Reason   string
	Guidance string
	s        string // the view's bytes, for the labels
	nl, lo   uint32 // label count, offset
}

// NumLabels is the number of the verdict's labels.
func (p ViewPrior) NumLabels() int { return int(p.nl) }

// Label returns the i-th label (0 <= i < NumLabels).
func (p ViewPrior) Label(i int) string {
	at := p.lo + uint32(i)*viewLabelSize
	off, ln := u32(p.s, at), u32(p.s, at+4)
	return p.s[off : off+ln]
}

// PriorAt returns the i-th earlier verdict (0 <= i < NumPrior), in the envelope prior's order.
func (v View) PriorAt(i int) ViewPrior {
	at := v.po + uint32(i)*viewPriorSize
	s := v.s
	str := func(k uint32) string {
		off, ln := u32(s, at+k), u32(s, at+k+4)
		return s[off : off+ln]
	}
	bits := uint64(u32(s, at+16)) | uint64(u32(s, at+20))<<32
	return ViewPrior{Stage: str(0), Action: str(8), Score: math.Float64frombits(bits), Rule: str(24), Reason: str(32),
		Guidance: str(40), s: s, nl: u32(s, at+48), lo: u32(s, at+52)}
}

// Prior returns the earlier verdicts as the envelope's prior decodes (encoding/json): nil
// without any, Labels nil where a verdict has none. It copies every string, so its result
// outlives the view; a hot path reads PriorAt instead, which allocates nothing.
func (v View) Prior() []Prior {
	if v.np == 0 {
		return nil
	}
	out := make([]Prior, v.np)
	for i := range out {
		p := v.PriorAt(i)
		out[i] = Prior{Stage: strings.Clone(p.Stage), Action: strings.Clone(p.Action), Score: p.Score,
			Rule: strings.Clone(p.Rule), Reason: strings.Clone(p.Reason), Guidance: strings.Clone(p.Guidance)}
		for j := range p.NumLabels() {
			out[i].Labels = append(out[i].Labels, strings.Clone(p.Label(j)))
		}
	}
	return out
}

// Depth is the deepest nesting of arrays and objects in the envelope the view was made from
// (strings skipped), the whole envelope and not only its parts.
func (v View) Depth() int { return int(v.depth) }

// NumFields is the number of header fields.
func (v View) NumFields() int { return int(v.nf) }

// FieldAt returns the i-th header field's id and value.
func (v View) FieldAt(i int) (id int, value string) {
	at := v.fo + uint32(i)*viewFieldSize
	off, ln := u32(v.s, at+4), u32(v.s, at+8)
	return int(u16(v.s, at)), v.s[off : off+ln]
}

// Field returns the first header field with the given id.
func (v View) Field(id int) (string, bool) {
	// The id alone first: slicing every field's value cost a guest more than the rest of a
	// short call's header reads (issue 27).
	for i := range int(v.nf) {
		if int(u16(v.s, v.fo+uint32(i)*viewFieldSize)) == id {
			_, val := v.FieldAt(i)
			return val, true
		}
	}
	return "", false
}

// Get returns the first header field with the given id, "" when absent.
func (v View) Get(id int) string {
	s, _ := v.Field(id)
	return s
}

// NumRoots is the number of parts laid out.
func (v View) NumRoots() int { return int(v.nr) }

// RootAt returns the i-th part laid out.
func (v View) RootAt(i int) Root {
	at := v.ro + uint32(i)*viewRootSize
	off, ln := u32(v.s, at+8), u32(v.s, at+12)
	return Root{Part: int(u16(v.s, at)), Node: u32(v.s, at+4), Raw: v.s[off : off+ln]}
}

// Root returns the part's root, if the envelope has it.
func (v View) Root(part int) (Root, bool) {
	for i := range int(v.nr) {
		if r := v.RootAt(i); r.Part == part {
			return r, true
		}
	}
	return Root{}, false
}

// NumNodes is the number of nodes of all parts.
func (v View) NumNodes() int { return int(v.nn) }

// Node returns node i (0 <= i < NumNodes).
func (v View) Node(i uint32) Node {
	at := v.no + i*viewNodeSize
	s := v.s
	str := func(k uint32) string {
		off, ln := u32(s, at+k), u32(s, at+k+4)
		return s[off : off+ln]
	}
	return Node{Type: s[at], Flags: s[at+1], Parent: u32(s, at+4), End: u32(s, at+8), Index: u32(s, at+12),
		Name: str(16), Key: str(24), Value: str(32)}
}

// Member returns the first member of object node obj named name.
func (v View) Member(obj uint32, name string) (uint32, bool) {
	// Node's fields read in place: building every child's Node (three strings) for its
	// name and end was most of a short response's walk (issue 27).
	at := v.no + obj*viewNodeSize
	if v.s[at] != NodeObject {
		return 0, false
	}
	end := u32(v.s, at+8)
	for c := obj + 1; c < end; {
		cat := v.no + c*viewNodeSize
		if off, ln := u32(v.s, cat+16), u32(v.s, cat+20); ln == uint32(len(name)) && v.s[off:off+ln] == name {
			return c, true
		}
		c = u32(v.s, cat+8)
	}
	return 0, false
}

// ---- encoder ----

// ErrViewInput is wrapped by AppendView's errors: the envelope is not a JSON object it can lay out.
var ErrViewInput = errors.New("abi: cannot lay out envelope")

type viewEnc struct {
	env      string // the envelope JSON
	fields   []viewField
	roots    []viewRoot
	nodes    []viewNode
	data     []byte // bytes after the node table: offsets into it are fixed up on write
	depth    int    // the envelope's nesting so far: 1, and 1 + each member value's
	argsNest int    // the arguments part's own nesting, for its alias in params
}

type viewField struct {
	id       uint16
	off, len uint32 // into data
}

type viewRoot struct {
	part          uint16
	node          uint32
	rawOff, rawLn uint32 // into data
}

type viewNode struct {
	typ, flags         uint8
	parent, end, index uint32
	nameOff, nameLn    uint32
	keyOff, keyLn      uint32
	valOff, valLn      uint32
}

// AppendView lays out the JSON envelope env as a view of layout 1 and appends it to
// dst. env is what the host would hand a stage instead (without "prior"); strings are unescaped
// as the envelope's JSON means them. It fails on input that is not a JSON object and on a view
// past 4 GiB; it does not check that env follows the envelope schema (fields of another JSON
// type than the schema's are left out of the header; every part is laid out whatever it holds).
func AppendView(dst []byte, env []byte) ([]byte, error) {
	// The tables start large enough for a usual envelope (its header fields, the engine's
	// paths, a few parts and values; the data area at most the envelope's bytes unless strings
	// are both kept raw and unescaped), so they seldom grow while being filled.
	// They are reused from earlier calls (viewEncs): write copies them into dst.
	e := getViewEnc(env)
	defer putViewEnc(e)
	s := e.env
	i := skipWS(s, 0)
	if i >= len(s) || s[i] != '{' {
		return dst, fmt.Errorf("%w: not a JSON object", ErrViewInput)
	}
	var argsRaw string
	haveArgs := false
	var seen uint32 // bits of the members read so far (viewMemberBit)
	// The envelope's depth (Nesting of the whole text) is 1 plus its members' deepest: a part
	// counts its own while it is laid out, every other member is measured here, so no part is
	// scanned once more for it.
	end, err := eachMemberEnd(s, i, func(name string, vs, ve int) error {
		bit := viewMemberBit(name)
		isPart := bit&viewPartBits != 0 && seen&bit == 0
		if !isPart {
			e.depth = max(e.depth, 1+Nesting(s[vs:ve]))
		}
		if bit == 0 || seen&bit != 0 {
			// A member the view does not hold, or a repeated one: the first counts, as gjson
			// reads it.
			return nil
		}
		seen |= bit
		val := s[vs:ve]
		str := func() (string, bool) {
			if s[vs] != '"' {
				return "", false
			}
			u, _ := unquote(val)
			return u, true
		}
		field := func(id uint16) {
			if u, ok := str(); ok {
				e.field(id, u)
			}
		}
		switch name {
		case "abi":
			field(FieldABI)
		case "id":
			field(FieldID)
		case "phase":
			field(FieldPhase)
		case "time":
			field(FieldTime)
		case "transport":
			field(FieldTransport)
		case "method":
			field(FieldMethod)
		case "request_id":
			e.field(FieldRequestID, val)
		case "server":
			field(FieldServer)
		case "session":
			field(FieldSession)
		case "protocol_version":
			field(FieldProtocolVersion)
		case "agent":
			field(FieldAgent)
		case "cwd":
			field(FieldCwd)
		case "tool":
			field(FieldTool)
		case "uri":
			field(FieldURI)
		case "prompt":
			field(FieldPrompt)
		case "principal":
			e.field(FieldPrincipal, val)
		case "client":
			return e.clientFields(vs)
		case "tool_info":
			if s[vs] != '{' {
				return nil
			}
			// The object is copied once; its members' values point into that copy (a string
			// with escapes is copied unescaped), as a part's do.
			in := e.within(FieldToolInfo, vs, ve)
			return eachMember(s, vs, func(name string, vs, ve int) error {
				switch name {
				case "name", "description":
					if s[vs] == '"' {
						id := uint16(FieldToolName)
						if name == "description" {
							id = FieldToolDescription
						}
						in.str(id, vs, ve)
					}
				case "input_schema":
					in.raw(FieldToolInputSchema, vs, ve)
				case "built_in":
					if s[vs:ve] == "true" {
						e.field(FieldToolBuiltIn, "true")
					}
				}
				return nil
			})
		case "engine":
			if s[vs] != '{' {
				return nil
			}
			in := e.within(FieldEngine, vs, ve)
			return eachMember(s, vs, func(name string, vs, ve int) error {
				switch name {
				case "binary", "home":
					if s[vs] == '"' {
						id := uint16(FieldEngineBinary)
						if name == "home" {
							id = FieldEngineHome
						}
						in.str(id, vs, ve)
					}
				case "paths", "pids":
					if s[vs] != '[' {
						return nil
					}
					return eachItem(s, vs, func(vs, ve int) error {
						if name == "paths" && s[vs] == '"' {
							in.str(FieldEnginePath, vs, ve)
						} else if name == "pids" && s[vs] != '"' && s[vs] != '{' && s[vs] != '[' {
							in.raw(FieldEnginePid, vs, ve)
						}
						return nil
					})
				}
				return nil
			})
		case "arguments":
			argsRaw, haveArgs = val, true
			return e.part(PartArguments, vs, ve, "")
		case "params":
			return e.part(PartParams, vs, ve, "params")
		case "result":
			return e.part(PartResult, vs, ve, "")
		case "error":
			return e.part(PartError, vs, ve, "")
		}
		return nil
	})
	if err != nil {
		return dst, err
	}
	if end < len(s) {
		e.depth = max(e.depth, Nesting(s[end:])) // anything after the object counts too, as in Nesting(s)
	}
	// An alias stands for params.arguments only when it is byte for byte the arguments part.
	for i := range e.nodes {
		n := &e.nodes[i]
		if n.typ == NodeAlias {
			raw := string(e.data[n.valOff : n.valOff+n.valLn])
			if !haveArgs || raw != argsRaw {
				return dst, fmt.Errorf("%w: internal: alias without its part", ErrViewInput)
			}
			n.valOff, n.valLn = e.str("arguments")
		}
	}
	return e.write(dst, e.depth)
}

// viewEncs holds AppendView's tables between calls, so laying out an envelope allocates only the
// view it returns. Tables grown past maxPooledView bytes are dropped rather than kept.
var viewEncs = sync.Pool{New: func() any {
	return &viewEnc{fields: make([]viewField, 0, 32), roots: make([]viewRoot, 0, 4), nodes: make([]viewNode, 0, 16)}
}}

const maxPooledView = 256 << 10

func getViewEnc(env []byte) *viewEnc {
	e := viewEncs.Get().(*viewEnc)
	e.env = unsafe.String(unsafe.SliceData(env), len(env))
	e.depth = 1
	e.data = slices.Grow(e.data, len(env)+64)
	return e
}

func putViewEnc(e *viewEnc) {
	if cap(e.data) > maxPooledView || cap(e.nodes)*viewNodeSize > maxPooledView {
		return
	}
	*e = viewEnc{fields: e.fields[:0], roots: e.roots[:0], nodes: e.nodes[:0], data: e.data[:0]}
	viewEncs.Put(e)
}

// viewMembers are the envelope members AppendView reads, in the order of their bits.
var viewMembers = [...]string{"abi", "id", "phase", "time", "transport", "method", "request_id", "server",
	"session", "protocol_version", "agent", "cwd", "tool", "uri", "prompt", "principal", "client",
	"tool_info", "engine", "arguments", "params", "result", "error"}

// viewPartBits are the bits of the members laid out as parts.
var viewPartBits = viewMemberBit("arguments") | viewMemberBit("params") | viewMemberBit("result") | viewMemberBit("error")

// viewMemberBit is name's bit among viewMembers, or 0 for a member the view does not hold.
func viewMemberBit(name string) uint32 { return viewMemberBits[name] }

// viewMemberBits maps each of viewMembers to its bit.
var viewMemberBits = func() map[string]uint32 {
	m := make(map[string]uint32, len(viewMembers))
	for i, name := range viewMembers {
		m[name] = 1 << i
	}
	return m
}()

// field appends a header field.
func (e *viewEnc) field(id uint16, val string) {
	off, ln := e.str(val)
	e.fields = append(e.fields, viewField{id, off, ln})
}

// copied is a header value laid out as a field whose bytes are in the data area: the fields of
// its members' values point into them.
type copied struct {
	e    *viewEnc
	base int // data offset of env byte i is base+i
}

// within appends the header field id with the JSON value env[vs:ve] and returns it, for its
// members' fields.
func (e *viewEnc) within(id uint16, vs, ve int) copied {
	off, ln := e.str(e.env[vs:ve])
	e.fields = append(e.fields, viewField{id, off, ln})
	return copied{e, int(off) - vs}
}

// str appends the field id with the string env[vs:ve] unescaped: pointing into the copy, or
// copied unescaped where it has an escape.
func (c copied) str(id uint16, vs, ve int) {
	u, esc := unquote(c.e.env[vs:ve])
	if esc {
		c.e.field(id, u)
		return
	}
	c.e.fields = append(c.e.fields, viewField{id, uint32(c.base + vs + 1), uint32(ve - vs - 2)})
}

// raw appends the field id with the JSON text env[vs:ve], pointing into the copy.
func (c copied) raw(id uint16, vs, ve int) {
	c.e.fields = append(c.e.fields, viewField{id, uint32(c.base + vs), uint32(ve - vs)})
}

// str appends val to the data area and returns its offset and length there.
func (e *viewEnc) str(val string) (uint32, uint32) {
	off := uint32(len(e.data))
	e.data = append(e.data, val...)
	return off, uint32(len(val))
}

// clientFields adds the client object's name and version.
func (e *viewEnc) clientFields(vs int) error {
	s := e.env
	if s[vs] != '{' {
		return nil
	}
	return eachMember(s, vs, func(name string, vs, ve int) error {
		id := uint16(FieldClientName)
		switch name {
		case "name":
		case "version":
			id = FieldClientVersion
		default:
			return nil
		}
		if s[vs] == '"' {
			u, _ := unquote(s[vs:ve])
			e.field(id, u)
		}
		return nil
	})
}

// part lays out the JSON value env[vs:ve] as part's nodes. Its raw JSON is copied into the data
// area once; strings without escapes, names, numbers and literals point into that copy.
func (e *viewEnc) part(part uint16, vs, ve int, alias string) error {
	rawOff, rawLn := e.str(e.env[vs:ve])
	root := uint32(len(e.nodes))
	e.roots = append(e.roots, viewRoot{part, root, rawOff, rawLn})
	base := int(rawOff) - vs // data offset of env byte i is base+i
	s := e.env
	add := func(vs, ve int, flags uint8, parent uint32, index uint32, nameOff, nameLn, keyOff, keyLn uint32) (uint32, error) {
		if len(e.nodes) >= math.MaxUint32-1 {
			return 0, fmt.Errorf("%w: too many values", ErrViewInput)
		}
		idx := uint32(len(e.nodes))
		n := viewNode{flags: flags, parent: parent, end: idx + 1, index: index, nameOff: nameOff, nameLn: nameLn, keyOff: keyOff, keyLn: keyLn}
		switch c := s[vs]; {
		case c == '{':
			n.typ = NodeObject
		case c == '[':
			n.typ = NodeArray
		case c == '"':
			n.typ = NodeString
			u, esc := unquote(s[vs:ve])
			if esc {
				n.valOff, n.valLn = e.str(u)
			} else {
				n.valOff, n.valLn = uint32(base+vs+1), uint32(ve-vs-2)
			}
		case c == 't':
			n.typ = NodeTrue
		case c == 'f':
			n.typ = NodeFalse
		case c == 'n':
			n.typ = NodeNull
		default:
			n.typ = NodeNumber
		}
		if n.typ != NodeString {
			n.valOff, n.valLn = uint32(base+vs), uint32(ve-vs)
		}
		e.nodes = append(e.nodes, n)
		return idx, nil
	}
	// Iterative: a token scan of env[vs:ve] keeps the open containers on a stack.
	type open struct {
		node          uint32
		keyOff, keyLn uint32
		top, isRoot   bool
		obj           bool
		count         uint32
	}
	var opens []open
	i := vs
	pending := false // a member name was read and its value is next
	var nameOff, nameLn uint32
	for i < ve {
		i = skipWS(s, i)
		if i >= ve {
			break
		}
		c := s[i]
		switch c {
		case ',', ':':
			i++
			continue
		case '}', ']':
			if len(opens) == 0 || opens[len(opens)-1].obj != (c == '}') {
				return fmt.Errorf("%w: %s: unbalanced JSON", ErrViewInput, PartName(int(part)))
			}
			top := opens[len(opens)-1]
			opens = opens[:len(opens)-1]
			e.nodes[top.node].end = uint32(len(e.nodes))
			e.nodes[top.node].valLn = uint32(base+i+1) - e.nodes[top.node].valOff
			i++
			continue
		}
		var cur *open
		if len(opens) > 0 {
			cur = &opens[len(opens)-1]
		}
		if cur != nil && cur.obj && !pending {
			// a member name
			end := skipString(s, i)
			if end < 0 || end > ve {
				return fmt.Errorf("%w: %s: malformed JSON", ErrViewInput, PartName(int(part)))
			}
			u, esc := unquote(s[i:end])
			if esc {
				nameOff, nameLn = e.str(u)
			} else {
				nameOff, nameLn = uint32(base+i+1), uint32(end-i-2)
			}
			pending = true
			i = end
			continue
		}
		// a value
		vend := i
		switch c {
		case '{', '[':
			vend = i + 1 // containers end at their close
		case '"':
			vend = skipString(s, i)
		default:
			vend = skipScalar(s, i)
		}
		if vend < 0 || vend > ve || vend == i {
			return fmt.Errorf("%w: %s: malformed JSON", ErrViewInput, PartName(int(part)))
		}
		var flags uint8
		parent, index := uint32(ViewNone), uint32(0)
		var nOff, nLn, kOff, kLn uint32
		top := false
		if cur != nil {
			parent = cur.node
			if cur.obj {
				flags |= NodeMember
				nOff, nLn, kOff, kLn = nameOff, nameLn, nameOff, nameLn
				top = cur.isRoot
			} else {
				flags |= NodeItem
				index = cur.count
				kOff, kLn = cur.keyOff, cur.keyLn
				top = cur.top
			}
			cur.count++
			if top {
				flags |= NodeTop
			}
		}
		if alias != "" && cur != nil && cur.isRoot && cur.obj && e.nameIs(nOff, nLn, "arguments") {
			// params.arguments: an alias when byte for byte the envelope's arguments.
			end := skipValue(s, i)
			if end > 0 && end <= ve {
				if args, ok := e.argsRaw(); ok && string(args) == s[i:end] {
					e.depth = max(e.depth, 1+len(opens)+e.argsNest) // the same bytes, not walked again
					idx := uint32(len(e.nodes))
					e.nodes = append(e.nodes, viewNode{typ: NodeAlias, flags: flags, parent: parent, end: idx + 1,
						index: index, nameOff: nOff, nameLn: nLn, keyOff: kOff, keyLn: kLn,
						valOff: uint32(base + i), valLn: uint32(end - i)})
					pending = false
					i = end
					continue
				}
			}
		}
		idx, err := add(i, vend, flags, parent, index, nOff, nLn, kOff, kLn)
		if err != nil {
			return err
		}
		pending = false
		if c == '{' || c == '[' {
			opens = append(opens, open{node: idx, keyOff: kOff, keyLn: kLn, top: top, isRoot: cur == nil, obj: c == '{'})
			e.depth = max(e.depth, 1+len(opens))
			if part == PartArguments {
				e.argsNest = max(e.argsNest, len(opens))
			}
		}
		i = vend
	}
	if len(opens) != 0 {
		return fmt.Errorf("%w: %s: unbalanced JSON", ErrViewInput, PartName(int(part)))
	}
	return nil
}

func (e *viewEnc) nameIs(off, ln uint32, name string) bool {
	return int(ln) == len(name) && string(e.data[off:off+ln]) == name
}

// argsRaw returns the arguments part's raw JSON, when it was laid out before.
func (e *viewEnc) argsRaw() ([]byte, bool) {
	for _, r := range e.roots {
		if r.part == PartArguments {
			return e.data[r.rawOff : r.rawOff+r.rawLn], true
		}
	}
	return nil, false
}

func (e *viewEnc) write(dst []byte, depth int) ([]byte, error) {
	fo := uint64(viewHeader2Size) // 8 bytes past layout 1's header: AppendViewPrior fills them
	ro := fo + uint64(len(e.fields))*viewFieldSize
	no := ro + uint64(len(e.roots))*viewRootSize
	do := no + uint64(len(e.nodes))*viewNodeSize
	total := do + uint64(len(e.data))
	if total > math.MaxUint32 {
		return dst, fmt.Errorf("%w: the view would be %d bytes, past 4 GiB", ErrViewInput, total)
	}
	d := uint32(do)
	start := len(dst)
	if cap(dst)-len(dst) < int(total) {
		nb := make([]byte, len(dst), len(dst)+int(total))
		copy(nb, dst)
		dst = nb
	}
	le := binary.LittleEndian
	dst = append(dst, ViewMagic...)
	dst = le.AppendUint16(dst, ViewLayout1)
	dst = le.AppendUint16(dst, 0)
	dst = le.AppendUint32(dst, uint32(total))
	dst = le.AppendUint32(dst, uint32(min(depth, math.MaxUint32)))
	dst = le.AppendUint32(dst, uint32(len(e.fields)))
	dst = le.AppendUint32(dst, uint32(fo))
	dst = le.AppendUint32(dst, uint32(len(e.roots)))
	dst = le.AppendUint32(dst, uint32(ro))
	dst = le.AppendUint32(dst, uint32(len(e.nodes)))
	dst = le.AppendUint32(dst, uint32(no))
	dst = append(dst, 0, 0, 0, 0, 0, 0, 0, 0) // layout 2's prior count and offset
	for _, f := range e.fields {
		dst = le.AppendUint16(dst, f.id)
		dst = le.AppendUint16(dst, 0)
		dst = le.AppendUint32(dst, d+f.off)
		dst = le.AppendUint32(dst, f.len)
	}
	for _, r := range e.roots {
		dst = le.AppendUint16(dst, r.part)
		dst = le.AppendUint16(dst, 0)
		dst = le.AppendUint32(dst, r.node)
		dst = le.AppendUint32(dst, d+r.rawOff)
		dst = le.AppendUint32(dst, r.rawLn)
	}
	for _, n := range e.nodes {
		dst = append(dst, n.typ, n.flags, 0, 0)
		dst = le.AppendUint32(dst, n.parent)
		dst = le.AppendUint32(dst, n.end)
		dst = le.AppendUint32(dst, n.index)
		dst = le.AppendUint32(dst, d+n.nameOff)
		dst = le.AppendUint32(dst, n.nameLn)
		dst = le.AppendUint32(dst, d+n.keyOff)
		dst = le.AppendUint32(dst, n.keyLn)
		dst = le.AppendUint32(dst, d+n.valOff)
		dst = le.AppendUint32(dst, n.valLn)
	}
	dst = append(dst, e.data...)
	if uint64(len(dst)-start) != total {
		return dst[:start], fmt.Errorf("%w: internal: wrote %d bytes, meant %d", ErrViewInput, len(dst)-start, total)
	}
	return dst, nil
}

// AppendViewPrior appends to dst the layout-1 view made by AppendView with the earlier verdicts
// prior added: a layout-2 view. The layout-1 bytes are copied, not laid out again (AppendView
// leaves room for layout 2's header); the prior table, its label tables and their strings follow
// them. Each string is what the envelope's JSON prior decodes to: invalid UTF-8 becomes U+FFFD
// byte by byte, as encoding/json writes it. view must be AppendView's output, unchanged.
func AppendViewPrior(dst, view []byte, prior []Prior) ([]byte, error) {
	if len(view) < viewHeader2Size || !IsView(view) {
		return dst, fmt.Errorf("%w: not a view from AppendView", ErrViewInput)
	}
	le := binary.LittleEndian
	if ver := le.Uint16(view[4:]); ver != ViewLayout1 || uint64(le.Uint32(view[8:])) != uint64(len(view)) ||
		le.Uint32(view[20:]) < viewHeader2Size || le.Uint32(view[28:]) < viewHeader2Size || le.Uint32(view[36:]) < viewHeader2Size ||
		le.Uint64(view[40:]) != 0 {
		return dst, fmt.Errorf("%w: not a layout-1 view from AppendView", ErrViewInput)
	}
	po := uint64(len(view))
	lo := po + uint64(len(prior))*viewPriorSize // label tables
	so := lo                                    // strings
	for _, p := range prior {
		so += uint64(len(p.Labels)) * viewLabelSize
	}
	total := so
	for _, p := range prior {
		total += uint64(jsonTextLen(p.Stage) + jsonTextLen(p.Action) + jsonTextLen(p.Rule) + jsonTextLen(p.Reason) + jsonTextLen(p.Guidance))
		for _, l := range p.Labels {
			total += uint64(jsonTextLen(l))
		}
	}
	if total > math.MaxUint32 {
		return dst, fmt.Errorf("%w: the view would be %d bytes, past 4 GiB", ErrViewInput, total)
	}
	start := len(dst)
	dst = slices.Grow(dst, int(total))
	dst = append(dst, view...)
	v := dst[start:]
	le.PutUint16(v[4:], ViewLayout2)
	le.PutUint32(v[8:], uint32(total))
	le.PutUint32(v[40:], uint32(len(prior)))
	le.PutUint32(v[44:], uint32(po))
	// The tables first, with the strings' offsets counted ahead; then the strings in that order.
	str := uint32(so)
	ref := func(b []byte, s string) []byte {
		n := uint32(jsonTextLen(s))
		b = le.AppendUint32(b, str)
		str += n
		return le.AppendUint32(b, n)
	}
	labels := uint32(lo)
	for _, p := range prior {
		dst = ref(dst, p.Stage)
		dst = ref(dst, p.Action)
		dst = le.AppendUint64(dst, math.Float64bits(p.Score))
		dst = ref(dst, p.Rule)
		dst = ref(dst, p.Reason)
		dst = ref(dst, p.Guidance)
		dst = le.AppendUint32(dst, uint32(len(p.Labels)))
		dst = le.AppendUint32(dst, labels)
		labels += uint32(len(p.Labels)) * viewLabelSize
	}
	for _, p := range prior {
		for _, l := range p.Labels {
			dst = ref(dst, l)
		}
	}
	for _, p := range prior {
		for _, s := range [...]string{p.Stage, p.Action, p.Rule, p.Reason, p.Guidance} {
			dst = appendJSONText(dst, s)
		}
	}
	for _, p := range prior {
		for _, l := range p.Labels {
			dst = appendJSONText(dst, l)
		}
	}
	if uint64(len(dst)-start) != total || str != uint32(total) {
		return dst[:start], fmt.Errorf("%w: internal: wrote %d bytes, meant %d", ErrViewInput, len(dst)-start, total)
	}
	return dst, nil
}

// jsonTextLen is len(appendJSONText(nil, s)).
func jsonTextLen(s string) int {
	if utf8.ValidString(s) {
		return len(s)
	}
	n := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			n += utf8.RuneLen(utf8.RuneError)
		} else {
			n += size
		}
		i += size
	}
	return n
}

// appendJSONText appends s as encoding/json's string encoding of it decodes: each byte that is
// not part of valid UTF-8 becomes U+FFFD.
func appendJSONText(b []byte, s string) []byte {
	if utf8.ValidString(s) {
		return append(b, s...)
	}
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = utf8.AppendRune(b, utf8.RuneError)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return b
}

// ---- a JSON scanner for the encoder: byte offsets, no tree ----

func skipWS(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string starting at s[i] == '"', or -1.
func skipString(s string, i int) int {
	if i >= len(s) || s[i] != '"' {
		return -1
	}
	// Most strings hold no escape: the first quote after the opening one ends them, found with
	// IndexByte (vectorised) rather than byte by byte. From the first backslash on, the scan is
	// by bytes, as before.
	q := strings.IndexByte(s[i+1:], '"')
	if q < 0 {
		return -1
	}
	b := strings.IndexByte(s[i+1:i+1+q], '\\')
	if b < 0 {
		return i + 1 + q + 1
	}
	for j := i + 1 + b; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

// skipScalar returns the index after the number or literal at s[i].
func skipScalar(s string, i int) int {
	j := i
	for j < len(s) {
		switch c := s[j]; {
		case c >= '0' && c <= '9', c >= 'a' && c <= 'z', c == '-', c == '+', c == '.', c == 'E':
			j++
		default:
			return j
		}
	}
	return j
}

// skipValue returns the index after the JSON value at s[i], or -1.
func skipValue(s string, i int) int {
	if i >= len(s) {
		return -1
	}
	switch s[i] {
	case '"':
		return skipString(s, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(s); j++ {
			switch s[j] {
			case '"':
				k := skipString(s, j)
				if k < 0 {
					return -1
				}
				j = k - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	}
	j := skipScalar(s, i)
	if j == i {
		return -1
	}
	return j
}

// eachMember calls fn for each member of the object at s[i] == '{', with its unescaped name and
// the bounds of its value.
func eachMember(s string, i int, fn func(name string, vs, ve int) error) error {
	_, err := eachMemberEnd(s, i, fn)
	return err
}

// eachMemberEnd is eachMember, and returns the index after the object's closing brace.
func eachMemberEnd(s string, i int, fn func(name string, vs, ve int) error) (int, error) {
	i = skipWS(s, i+1)
	if i < len(s) && s[i] == '}' {
		return i + 1, nil
	}
	for {
		end := skipString(s, i)
		if end < 0 {
			return 0, fmt.Errorf("%w: malformed JSON object", ErrViewInput)
		}
		name, _ := unquote(s[i:end])
		i = skipWS(s, end)
		if i >= len(s) || s[i] != ':' {
			return 0, fmt.Errorf("%w: malformed JSON object", ErrViewInput)
		}
		vs := skipWS(s, i+1)
		ve := skipValue(s, vs)
		if ve < 0 {
			return 0, fmt.Errorf("%w: malformed JSON value of %q", ErrViewInput, name)
		}
		if err := fn(name, vs, ve); err != nil {
			return 0, err
		}
		i = skipWS(s, ve)
		if i < len(s) && s[i] == ',' {
			i = skipWS(s, i+1)
			continue
		}
		if i < len(s) && s[i] == '}' {
			return i + 1, nil
		}
		return 0, fmt.Errorf("%w: malformed JSON object", ErrViewInput)
	}
}

// eachItem calls fn with the bounds of each item of the array at s[i] == '['.
func eachItem(s string, i int, fn func(vs, ve int) error) error {
	i = skipWS(s, i+1)
	if i < len(s) && s[i] == ']' {
		return nil
	}
	for {
		ve := skipValue(s, i)
		if ve < 0 {
			return fmt.Errorf("%w: malformed JSON array", ErrViewInput)
		}
		if err := fn(i, ve); err != nil {
			return err
		}
		i = skipWS(s, ve)
		if i < len(s) && s[i] == ',' {
			i = skipWS(s, i+1)
			continue
		}
		if i < len(s) && s[i] == ']' {
			return nil
		}
		return fmt.Errorf("%w: malformed JSON array", ErrViewInput)
	}
}

// Nesting returns the deepest nesting of arrays and objects in JSON text, skipping strings: a
// linear byte scan with no recursion (the view's depth, and the injection stage's bound).
func Nesting(s string) int {
	depth, most := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '"':
			e := skipString(s, i)
			if e < 0 {
				return most // a string left open holds the rest
			}
			i = e - 1
		case '{', '[':
			depth++
			most = max(most, depth)
		case '}', ']':
			depth--
		}
	}
	return most
}

// unquote decodes the JSON string q (with its quotes) the way tidwall/gjson does, so a plugin
// moving from gjson to the view reads the same bytes: escapes decoded, a surrogate pair joined
// (a high surrogate followed by any \u escape consumes it), anything else copied as is.
// escaped reports whether the result differs from q's inside.
func unquote(q string) (string, bool) {
	in := q[1 : len(q)-1]
	if strings.IndexByte(in, '\\') < 0 {
		return in, false
	}
	str := make([]byte, 0, len(in))
	for i := 0; i < len(in); i++ {
		switch {
		default:
			str = append(str, in[i])
		case in[i] < ' ':
			return string(str), true
		case in[i] == '\\':
			i++
			if i >= len(in) {
				return string(str), true
			}
			switch in[i] {
			default:
				return string(str), true
			case '\\':
				str = append(str, '\\')
			case '/':
				str = append(str, '/')
			case 'b':
				str = append(str, '\b')
			case 'f':
				str = append(str, '\f')
			case 'n':
				str = append(str, '\n')
			case 'r':
				str = append(str, '\r')
			case 't':
				str = append(str, '\t')
			case '"':
				str = append(str, '"')
			case 'u':
				if i+5 > len(in) {
					return string(str), true
				}
				r := hexRune(in[i+1:])
				i += 5
				if utf16.IsSurrogate(r) && len(in[i:]) >= 6 && in[i] == '\\' && in[i+1] == 'u' {
					r = utf16.DecodeRune(r, hexRune(in[i+2:]))
					i += 6
				}
				str = utf8.AppendRune(str, r)
				i--
			}
		}
	}
	return string(str), true
}

// hexRune reads four hex digits as gjson's runeit does (a non-hex byte counts as its value
// past '0').
func hexRune(s string) rune {
	n, ok := parseHex4(s)
	if !ok {
		return 0
	}
	return rune(n)
}

func parseHex4(s string) (uint64, bool) {
	var n uint64
	ok := true
	for i := 0; i < 4 && i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			n = n*16 + uint64(c-'0')
		case c >= 'a' && c <= 'f':
			n = n*16 + uint64(c-'a'+10)
		case c >= 'A' && c <= 'F':
			n = n*16 + uint64(c-'A'+10)
		default:
			ok = false
			return n, ok
		}
	}
	return n, ok
}
