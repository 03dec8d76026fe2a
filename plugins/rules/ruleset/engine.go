package ruleset

import (
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/added060/palisade/plugins/internal/argkind"
	"github.com/added060/palisade/plugins/internal/shell"
	"github.com/added060/palisade/sdk/go/abi"
	"github.com/added060/palisade/sdk/go/glob"
	"github.com/tidwall/gjson"
)

// DefaultEngineName stands for `{engine}` in a commands glob when the envelope names no
// engine binary.
const DefaultEngineName = "palisade"

// call is what the engine_paths and commands conditions read from one envelope: the engine's
// own paths (the envelope's `engine`, ABI 1.1), the path-like argument values and the commands
// of shell arguments. It is built once per Evaluate, and only when a rule asks.
type call struct {
	binary, home, cwd string
	paths             [][]string // engine paths, split into elements
	pids              []string   // the engine's process ids, as decimal words
	values            []string   // path-like argument values and the uri
	commands          [][]string // argv of every command in a shell argument
	words             []string   // every word and redirect target of those commands
}

// engineCache holds the last envelope's `engine` object parsed: the host sends the same one on
// every call (its own paths), so the paths are cleaned and split once, not per call.
type engineCache struct {
	mu           sync.Mutex
	raw          string // the object's JSON, copied
	binary, home string
	paths        [][]string // shared by every call that reads it: never modified
	pids         []string   // likewise
}

// toolCache holds the last call's argument classifier: a client calls the same tools again
// and again, and building one decodes the tool's input schema (encoding/json, costly in Wasm).
type toolCache struct {
	mu         sync.Mutex
	tool, info string // the key (the tool's name and its tool_info JSON), copied
	kinds      *argkind.Tool
}

// get returns argkind.ForCall for the tool named tool and its tool_info ti (absent or not an
// object: none), reusing the last one while both are the same bytes. A Tool is read-only once
// built, so calls share it.
func (tc *toolCache) get(tool string, ti gjson.Result) *argkind.Tool {
	info := ""
	if ti.IsObject() {
		info = ti.Raw
	}
	tc.mu.Lock()
	defer tc.mu.Unlock()
	if tc.kinds != nil && tc.tool == tool && tc.info == info {
		return tc.kinds
	}
	var ai *abi.ToolInfo
	if info != "" {
		ai = &abi.ToolInfo{Name: ti.Get("name").String(), Description: ti.Get("description").String(), InputSchema: []byte(ti.Get("input_schema").Raw)}
	}
	// tool and info may be views of the caller's input buffer, which the next call overwrites.
	tc.tool, tc.info = strings.Clone(tool), strings.Clone(info)
	tc.kinds = argkind.ForCall(tc.tool, ai)
	return tc.kinds
}

// get returns the binary, home, split paths and process ids of the engine object eng.
func (ec *engineCache) get(eng gjson.Result) (binary, home string, paths [][]string, pids []string) {
	ec.mu.Lock()
	defer ec.mu.Unlock()
	if eng.Raw == ec.raw && eng.Raw != "" {
		return ec.binary, ec.home, ec.paths, ec.pids
	}
	// Every string kept is a copy: eng may be a view of the caller's input buffer (the view's
	// engine JSON is), which the next call overwrites.
	binary, home = strings.Clone(eng.Get("binary").String()), strings.Clone(eng.Get("home").String())
	eng.Get("paths").ForEach(func(_, p gjson.Result) bool {
		if s := strings.Clone(path.Clean(p.String())); strings.HasPrefix(s, "/") && s != "/" {
			paths = append(paths, strings.Split(s[1:], "/"))
		}
		return true
	})
	eng.Get("pids").ForEach(func(_, p gjson.Result) bool {
		if n := p.Int(); n > 0 {
			pids = append(pids, strconv.FormatInt(n, 10))
		}
		return true
	})
	// Raw may be a view of the caller's input buffer, which the next call overwrites.
	ec.raw, ec.binary, ec.home, ec.paths, ec.pids = strings.Clone(eng.Raw), binary, home, paths, pids
	return binary, home, paths, pids
}

func (e *Engine) loadCall(in *input, args gjson.Result) *call {
	c := &call{cwd: in.head[4]}
	c.binary, c.home, c.paths, c.pids = e.engine.get(in.get("engine"))
	if u := in.head[5]; u != "" {
		c.values = append(c.values, u)
	}
	kinds := e.tools.get(in.head[0], in.get("tool_info"))
	var walk func(key string, v gjson.Result)
	walk = func(key string, v gjson.Result) {
		switch {
		case v.IsObject():
			v.ForEach(func(k, el gjson.Result) bool { walk(k.String(), el); return true })
		case v.IsArray():
			v.ForEach(func(_, el gjson.Result) bool { walk(key, el); return true })
		case v.Type == gjson.String:
			s := v.String()
			switch k := kinds.Of(key); {
			case k == argkind.Shell:
				c.shell(s)
			case k == argkind.Path || pathLike(s):
				c.values = append(c.values, s)
			}
		}
	}
	walk("", args)
	return c
}

// shell adds the commands a shell argument runs. A line too long or invalid to parse is taken
// word by word (every word may name a path; no command is known).
func (c *call) shell(s string) {
	if len(s) <= shell.MaxParseBytes {
		if r := shell.Analyze(s); r.ParseErr == nil {
			for _, argv := range r.Commands {
				c.commands = append(c.commands, argv)
				c.words = append(c.words, argv...)
			}
			c.words = append(c.words, r.Files...)
			return
		}
	}
	c.words = append(c.words, strings.Fields(s)...)
}

// pathLike reports whether an argument value of no known kind reads as a path.
func pathLike(s string) bool {
	return strings.HasPrefix(s, "/") || strings.HasPrefix(s, "~") || strings.HasPrefix(s, "./") ||
		strings.HasPrefix(s, "../") || strings.HasPrefix(s, "$HOME") || strings.HasPrefix(s, "${HOME}") ||
		strings.HasPrefix(s, "file://")
}

// touchesEngine reports whether a path-like value or a shell word names one of the engine's
// paths or something below it.
func (c *call) touchesEngine() bool {
	if len(c.paths) == 0 {
		return false
	}
	for _, v := range c.values {
		if c.names(v) {
			return true
		}
	}
	for _, w := range c.words {
		if c.names(w) {
			return true
		}
	}
	return false
}

// names reports whether word, read as a path (after `file://`, `@`, a `key=` prefix, `~` and
// `$HOME`, relative to cwd and to the home folder), is an engine path or below one.
func (c *call) names(word string) bool {
	cands := []string{word}
	if i := strings.IndexByte(word, '='); i >= 0 {
		cands = append(cands, word[i+1:]) // of=PATH, --config=PATH
	}
	for _, w := range cands {
		w = strings.TrimPrefix(strings.TrimPrefix(w, "file://"), "@")
		if w == "" {
			continue
		}
		for _, h := range []string{"~", "$HOME", "${HOME}"} {
			if w == h || strings.HasPrefix(w, h+"/") {
				if c.home == "" {
					w = ""
				} else {
					w = c.home + w[len(h):]
				}
				break
			}
		}
		if w == "" {
			continue
		}
		var abs []string
		if strings.HasPrefix(w, "/") {
			abs = []string{w}
		} else {
			for _, dir := range []string{c.cwd, c.home} {
				if strings.HasPrefix(dir, "/") {
					abs = append(abs, dir+"/"+w)
				}
			}
		}
		for _, a := range abs {
			a = path.Clean(a)
			if a == "/" {
				continue
			}
			el := strings.Split(a[1:], "/")
			for _, p := range c.paths {
				if under(el, p) {
					return true
				}
			}
		}
	}
	return false
}

// under reports whether the path elements w are those of p or of something below p. An element
// of either may be a glob (a shell glob in a command word; a staged copy's random name in p);
// a glob element without a leading dot does not match a hidden name, as in the shell.
func under(w, p []string) bool {
	if len(w) < len(p) {
		return false
	}
	for i, pe := range p {
		we := w[i]
		switch {
		case hasGlob(we):
			if strings.HasPrefix(pe, ".") && !strings.HasPrefix(we, ".") {
				return false
			}
			if ok, _ := path.Match(strings.ToLower(we), strings.ToLower(pe)); !ok {
				return false
			}
		case hasGlob(pe):
			if ok, _ := path.Match(strings.ToLower(pe), strings.ToLower(we)); !ok {
				return false
			}
		case !strings.EqualFold(we, pe): // case-insensitive file systems (macOS, Windows)
			return false
		}
	}
	return true
}

func hasGlob(s string) bool { return strings.ContainsAny(s, "*?[") }

// runs reports whether a shell argument runs a command matching one of pats: a command is its
// argv joined by spaces, argv[0] by its base name; `{engine}` stands for "palisade" and for the
// base name of the engine's binary (a renamed binary, a unit still named palisade). pats were
// compiled by commandGlobs.
func (c *call) runs(pats []string) bool {
	names := []string{DefaultEngineName}
	if c.binary != "" {
		name := strings.TrimSuffix(path.Base(strings.ReplaceAll(c.binary, `\`, "/")), ".exe")
		if name != DefaultEngineName && name != "." && name != "/" {
			names = append(names, name)
		}
	}
	for _, argv := range c.commands {
		words := argv[1:]
		if len(c.pids) > 0 {
			words = c.markPids(words)
		}
		line := path.Base(argv[0])
		if len(words) > 0 {
			line += " " + strings.Join(words, " ")
		}
		for _, p := range pats {
			p = strings.ReplaceAll(p, "{engine_pid}", pidMark)
			for _, name := range names {
				if glob.Match(strings.ReplaceAll(p, "{engine}", name), line) {
					return true
				}
			}
		}
	}
	return false
}

// pidMark stands for an engine process id in a command line and for `{engine_pid}` in a commands
// glob, so that `kill *{engine_pid}*` matches `kill -9 4242` for the engine's pid 4242 and not
// `kill 42420`. A shell word cannot hold its NUL bytes.
const pidMark = "\x00engine-pid\x00"

// markPids returns words with each one that names an engine process (4242, or -4242 for its
// process group) replaced by pidMark.
func (c *call) markPids(words []string) []string {
	out := words
	for i, w := range words {
		if slices.Contains(c.pids, strings.TrimPrefix(w, "-")) {
			if &out[0] == &words[0] {
				out = slices.Clone(words)
			}
			out[i] = pidMark
		}
	}
	return out
}

// commandGlobs makes every `*` of a commands glob cross `/` (a command's arguments are paths).
func commandGlobs(pats []string) []string {
	out := make([]string, len(pats))
	for i, p := range pats {
		var b strings.Builder
		for j := 0; j < len(p); j++ {
			if p[j] != '*' {
				b.WriteByte(p[j])
				continue
			}
			for j+1 < len(p) && p[j+1] == '*' {
				j++
			}
			b.WriteString("**")
		}
		out[i] = b.String()
	}
	return out
}
