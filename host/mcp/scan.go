package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"unicode"
	"unicode/utf8"
)

// MaxDepth is how deeply arrays and objects may nest in a message the gateway reads (a batch
// array counts as one level). MCP messages rarely go past ten levels; a body nested deeper is
// refused when the scanner reaches the first level past the limit, before anything is built.
const MaxDepth = 128

// Strictness errors.
var (
	// ErrAmbiguousKeys marks a message with an object key given twice, or two keys that differ
	// only in case, or a significant key (jsonrpc, id, method, params, result, error; params'
	// name, arguments, uri) spelled in another case: JSON parsers disagree on which one counts
	// (Go's encoding/json matches struct fields case-insensitively and keeps the last; gjson,
	// which plugins use, keeps the first; JavaScript and Python keep the last exact key), so a
	// judge and a server could read different calls.
	ErrAmbiguousKeys = errors.New("mcp: ambiguous JSON object keys")
	// ErrTooDeep marks a message nested deeper than MaxDepth.
	ErrTooDeep = errors.New("mcp: nested too deeply")
)

// slot names a value the scanner keeps the position of while it checks the message.
type slot uint8

const (
	slotNone slot = iota
	slotJSONRPC
	slotID
	slotMethod
	slotParams
	slotResult
	slotError
	slotName            // params.name
	slotArguments       // params.arguments
	slotURI             // params.uri
	slotProtocolVersion // params.protocolVersion (initialize)
	slotClientInfo      // params.clientInfo (initialize)
	slotMeta            // params._meta
	slotCapabilities    // params.capabilities (initialize)
	slotProgressToken   // params._meta.progressToken
	slotMetaClientInfo  // params._meta["io.modelcontextprotocol/clientInfo"]
	slotSampling        // params.capabilities.sampling
	numSlots
)

// span is a value's position in the scanned bytes; end 0 means absent.
type span struct{ start, end int }

// frame is one open array or object.
type frame struct {
	object  bool
	role    slot // which object this is (slotNone, or slotParams/slotMeta/slotCapabilities; top is rootRole)
	start   int  // offset of '{' or '['
	keys    int  // index in scanner.keys where this object's keys begin
	fold    int  // length of scanner.fold when this object began
	seen    map[string]struct{}
	valSlot slot // slot of the container value being scanned inside this object
}

// rootRole marks the top object of a message.
const rootRole slot = numSlots

// scanner checks one JSON value without recursion: it validates the syntax (RFC 8259, strings in
// valid UTF-8), refuses duplicate and case-folded duplicate keys at every depth and anything
// nested deeper than the limit, and keeps the spans of the values a message's envelope needs.
// It builds no values: the only allocations are the frame stack and the folded keys.
type scanner struct {
	b     []byte
	i     int
	depth int // levels open above this value (a batch element starts at 1)
	stack []frame
	keys  []span // folded keys of the open objects, as offsets into fold
	fold  []byte
	slots [numSlots]span
	sig   bool // also refuse miscased significant keys and keep spans
}

// scanBuf is a scanner's stack, keys and folded keys, kept in scanBufs between parses: a parse
// grew each from nothing, about 20 allocations a served tools/call (request and answer).
type scanBuf struct {
	stack []frame
	keys  []span
	fold  []byte
}

var scanBufs = sync.Pool{New: func() any { return new(scanBuf) }}

// Buffers past these sizes (a message with thousands of keys or very deep nesting) are left to
// the collector rather than kept for every later parse.
const (
	maxPooledFrames = 1024
	maxPooledKeys   = 4096
	maxPooledFold   = 64 << 10
)

// borrow gives s the pooled buffers; giveBack must follow when s is done.
func (s *scanner) borrow() *scanBuf {
	w := scanBufs.Get().(*scanBuf)
	s.stack, s.keys, s.fold = w.stack[:0], w.keys[:0], w.fold[:0]
	return w
}

// giveBack returns s's buffers, grown or not, to the pool through w. Nothing a parse returns
// refers to them (the keys it reports are copies or spans of the message), and the frames are
// zeroed so that no key set is kept alive.
func (s *scanner) giveBack(w *scanBuf) {
	if cap(s.stack) > maxPooledFrames || cap(s.keys) > maxPooledKeys || cap(s.fold) > maxPooledFold {
		return
	}
	clear(s.stack[:cap(s.stack)])
	w.stack, w.keys, w.fold = s.stack[:0], s.keys[:0], s.fold[:0]
	s.stack, s.keys, s.fold = nil, nil, nil
	scanBufs.Put(w)
}

func (s *scanner) bad(what string) error {
	return fmt.Errorf("%w: %s at byte %d", ErrNotJSON, what, s.i)
}

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// value scans one JSON value starting at s.i (after whitespace) and leaves s.i after it.
func (s *scanner) value() error {
	s.stack = s.stack[:0]
	s.keys = s.keys[:0]
	s.fold = s.fold[:0]
	valSlot := slotNone
	for {
		s.ws()
		if s.i >= len(s.b) {
			return s.bad("unexpected end")
		}
		start := s.i
		switch c := s.b[s.i]; c {
		case '{', '[':
			if s.depth+len(s.stack)+1 > MaxDepth {
				return fmt.Errorf("%w: more than %d levels at byte %d", ErrTooDeep, MaxDepth, s.i)
			}
			role := slotNone
			if c == '{' && s.sig {
				switch {
				case len(s.stack) == 0:
					role = rootRole
				case valSlot == slotParams || valSlot == slotMeta || valSlot == slotCapabilities:
					role = valSlot
				}
			}
			s.stack = append(s.stack, frame{object: c == '{', role: role, start: start, keys: len(s.keys), fold: len(s.fold)})
			// The container's own slot is filled when it closes.
			s.stack[len(s.stack)-1].valSlot = slotNone
			s.pendingSlot(valSlot)
			s.i++
			s.ws()
			if s.i < len(s.b) && (s.b[s.i] == '}' && c == '{' || s.b[s.i] == ']' && c == '[') {
				s.i++
				if done, err := s.closed(); done || err != nil {
					return err
				}
				goto next
			}
			if c == '{' {
				var err error
				if valSlot, err = s.key(); err != nil {
					return err
				}
			} else {
				valSlot = slotNone
			}
			continue
		case '"':
			if _, err := s.str(); err != nil {
				return err
			}
		case 't':
			if err := s.lit("true"); err != nil {
				return err
			}
		case 'f':
			if err := s.lit("false"); err != nil {
				return err
			}
		case 'n':
			if err := s.lit("null"); err != nil {
				return err
			}
		default:
			if err := s.num(); err != nil {
				return err
			}
		}
		if valSlot != slotNone {
			s.slots[valSlot] = span{start, s.i}
		}
		if len(s.stack) == 0 {
			return nil
		}
	next:
		// After a value inside a container: ',' or the container's end.
		for {
			s.ws()
			if s.i >= len(s.b) {
				return s.bad("unterminated " + kind(s.top()))
			}
			f := s.top()
			c := s.b[s.i]
			if c == ',' {
				s.i++
				if f.object {
					var err error
					if valSlot, err = s.key(); err != nil {
						return err
					}
				} else {
					valSlot = slotNone
				}
				break
			}
			if f.object && c == '}' || !f.object && c == ']' {
				s.i++
				done, err := s.closed()
				if done || err != nil {
					return err
				}
				continue
			}
			return s.bad("expected , or end of " + kind(f))
		}
	}
}

func kind(f *frame) string {
	if f.object {
		return "object"
	}
	return "array"
}

func (s *scanner) top() *frame { return &s.stack[len(s.stack)-1] }

// pendingSlot remembers, in the parent frame, the slot of the container just opened, so closed
// can fill it.
func (s *scanner) pendingSlot(v slot) {
	if len(s.stack) >= 2 {
		s.stack[len(s.stack)-2].valSlot = v
	}
}

// closed pops the container that just ended; done reports that it was the outermost.
func (s *scanner) closed() (done bool, err error) {
	f := s.top()
	start := f.start
	s.keys = s.keys[:f.keys]
	s.fold = s.fold[:f.fold]
	s.stack = s.stack[:len(s.stack)-1]
	if len(s.stack) == 0 {
		return true, nil
	}
	if p := s.top(); p.valSlot != slotNone {
		s.slots[p.valSlot] = span{start, s.i}
		p.valSlot = slotNone
	}
	return false, nil
}

// significant names whose miscased spelling is refused, per object role.
var (
	topKeys    = []string{"jsonrpc", "id", "method", "params", "result", "error"}
	paramsKeys = []string{"name", "arguments", "uri"}
)

// key reads `"key" :` in the innermost object, refuses a duplicate and returns the slot of its
// value.
func (s *scanner) key() (slot, error) {
	s.ws()
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return slotNone, s.bad("expected a key")
	}
	raw, err := s.str()
	if err != nil {
		return slotNone, err
	}
	s.ws()
	if s.i >= len(s.b) || s.b[s.i] != ':' {
		return slotNone, s.bad("expected :")
	}
	s.i++
	f := s.top()
	n := len(s.fold)
	exact := s.foldKey(raw)
	k := span{n, len(s.fold)}
	folded := s.fold[k.start:k.end]
	// Duplicates: a linear search for small objects, a set past 16 keys.
	own := s.keys[f.keys:]
	dup := false
	if f.seen != nil {
		_, dup = f.seen[string(folded)]
		f.seen[string(folded)] = struct{}{}
	} else {
		for _, o := range own {
			if bytes.Equal(s.fold[o.start:o.end], folded) {
				dup = true
				break
			}
		}
		if !dup && len(own) >= 16 {
			f.seen = make(map[string]struct{}, 2*len(own))
			for _, o := range own {
				f.seen[string(s.fold[o.start:o.end])] = struct{}{}
			}
			f.seen[string(folded)] = struct{}{}
		}
	}
	if dup {
		return slotNone, fmt.Errorf("%w: an object has the key %q twice (or in two cases), at byte %d", ErrAmbiguousKeys, exact, s.i)
	}
	s.keys = append(s.keys, k)
	if !s.sig || f.role == slotNone {
		return slotNone, nil
	}
	var names []string
	switch f.role {
	case rootRole:
		names = topKeys
	case slotParams:
		names = paramsKeys
	}
	for _, n := range names {
		if string(folded) == n && string(exact) != n {
			return slotNone, fmt.Errorf("%w: key %q is not spelled %q", ErrAmbiguousKeys, exact, n)
		}
	}
	return slotFor(f.role, exact), nil
}

func slotFor(role slot, k []byte) slot {
	key := string(k)
	switch role {
	case rootRole:
		switch key {
		case "jsonrpc":
			return slotJSONRPC
		case "id":
			return slotID
		case "method":
			return slotMethod
		case "params":
			return slotParams
		case "result":
			return slotResult
		case "error":
			return slotError
		}
	case slotParams:
		switch key {
		case "name":
			return slotName
		case "arguments":
			return slotArguments
		case "uri":
			return slotURI
		case "protocolVersion":
			return slotProtocolVersion
		case "clientInfo":
			return slotClientInfo
		case "_meta":
			return slotMeta
		case "capabilities":
			return slotCapabilities
		}
	case slotMeta:
		switch key {
		case "progressToken":
			return slotProgressToken
		case MetaKeyClientInfo:
			return slotMetaClientInfo
		}
	case slotCapabilities:
		if key == "sampling" {
			return slotSampling
		}
	}
	return slotNone
}

// foldKey appends the key's case-folded form to s.fold and returns the exact key (raw without its
// quotes, decoded when it has escapes).
func (s *scanner) foldKey(raw []byte) []byte {
	inner := raw[1 : len(raw)-1]
	plain := true
	for _, c := range inner {
		if c >= utf8.RuneSelf || c == '\\' {
			plain = false
			break
		}
	}
	if plain {
		for _, c := range inner {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			s.fold = append(s.fold, c)
		}
		return inner
	}
	var exact string
	_ = json.Unmarshal(raw, &exact) // str validated it
	for _, r := range exact {
		s.fold = utf8.AppendRune(s.fold, unicode.ToLower(unicode.ToUpper(r)))
	}
	return []byte(exact)
}

// str scans a string starting at its quote and returns it with its quotes.
func (s *scanner) str() ([]byte, error) {
	start := s.i
	s.i++
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			return s.b[start:s.i], nil
		case c == '\\':
			if s.i+1 >= len(s.b) {
				return nil, s.bad("unterminated string")
			}
			switch s.b[s.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.i += 2
			case 'u':
				if s.i+6 > len(s.b) {
					return nil, s.bad("short \\u escape")
				}
				for _, h := range s.b[s.i+2 : s.i+6] {
					if !isHex(h) {
						return nil, s.bad("bad \\u escape")
					}
				}
				s.i += 6
			default:
				return nil, s.bad("bad escape")
			}
		case c < 0x20:
			return nil, s.bad("control character in string")
		case c < utf8.RuneSelf:
			s.i++
		default:
			r, n := utf8.DecodeRune(s.b[s.i:])
			if r == utf8.RuneError && n <= 1 {
				return nil, s.bad("invalid UTF-8 in string")
			}
			s.i += n
		}
	}
	return nil, s.bad("unterminated string")
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

func (s *scanner) lit(word string) error {
	if !bytes.HasPrefix(s.b[s.i:], []byte(word)) {
		return s.bad("invalid literal")
	}
	s.i += len(word)
	return nil
}

// num scans a number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *scanner) num() error {
	digits := func() int {
		n := 0
		for s.i < len(s.b) && '0' <= s.b[s.i] && s.b[s.i] <= '9' {
			s.i++
			n++
		}
		return n
	}
	if s.i < len(s.b) && s.b[s.i] == '-' {
		s.i++
	}
	switch {
	case s.i < len(s.b) && s.b[s.i] == '0':
		s.i++
	case digits() == 0:
		return s.bad("expected a value")
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if digits() == 0 {
			return s.bad("bad number")
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if digits() == 0 {
			return s.bad("bad number")
		}
	}
	return nil
}

// Check reports whether b is one JSON value the gateway would read unambiguously: valid syntax,
// no key given twice or in two cases at any depth, and no deeper than MaxDepth. It runs in one
// pass without recursion. Errors wrap ErrNotJSON, ErrAmbiguousKeys or ErrTooDeep.
func Check(b []byte) error {
	s := scanner{b: b}
	defer s.giveBack(s.borrow())
	s.ws()
	if err := s.value(); err != nil {
		return err
	}
	s.ws()
	if s.i != len(s.b) {
		return s.bad("trailing data")
	}
	return nil
}
