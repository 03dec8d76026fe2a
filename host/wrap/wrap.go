package wrap

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
)

// Sentinel errors; match with errors.Is.
var (
	ErrNotFound       = errors.New("wrap: server not found")
	ErrAmbiguous      = errors.New("wrap: server found in more than one place")
	ErrAlreadyWrapped = errors.New("wrap: server is already wrapped")
	ErrNotWrapped     = errors.New("wrap: server is not wrapped by palisade")
	ErrNotStdio       = errors.New("wrap: server is not a local (stdio) command")
	ErrInvalid        = errors.New("wrap: config is not valid JSON")
)

// InsertedArgs marks a wrapped entry that had no args before wrapping (unwrap removes the args
// member again). `palisade proxy` accepts and ignores it.
const InsertedArgs = "--inserted-args"

// Options name the server, the config and the palisade binary.
type Options struct {
	Server string // the mcpServers key; required
	// Config is the file to edit; "" = search KnownPaths and use the only file holding Server.
	Config string
	// Palisade is the command written into the entry; "" = this executable's path.
	Palisade string
	// ProxyArgs go between `proxy --server NAME` and `--` (e.g. --bundle DIR); nil = none.
	ProxyArgs []string
	Home      string // for KnownPaths; "" = the user's home
	Cwd       string // for KnownPaths; "" = the working directory
}

// Result says what was written.
type Result struct {
	File   string // the config edited
	Backup string // the copy of the file as it was
	Where  string // where the entry sits, e.g. mcpServers.fs or projects["/app"].mcpServers.fs
}

// KnownPaths lists the MCP config files of Claude Desktop, Cursor and Claude Code, user-wide
// first, then the project ones under cwd.
func KnownPaths(home, cwd string) []string {
	var ps []string
	switch runtime.GOOS {
	case "darwin":
		ps = append(ps, filepath.Join(home, "Library", "Application Support", "Claude", "claude_desktop_config.json"))
	case "windows":
		if app := os.Getenv("APPDATA"); app != "" {
			ps = append(ps, filepath.Join(app, "Claude", "claude_desktop_config.json"))
		}
	default:
		ps = append(ps, filepath.Join(home, ".config", "Claude", "claude_desktop_config.json"))
	}
	ps = append(ps,
		filepath.Join(home, ".cursor", "mcp.json"), // Cursor, global
		filepath.Join(home, ".claude.json"),        // Claude Code, user and local scopes
	)
	if cwd != "" {
		ps = append(ps,
			filepath.Join(cwd, ".mcp.json"),           // Claude Code, project scope
			filepath.Join(cwd, ".cursor", "mcp.json"), // Cursor, project
		)
	}
	return ps
}

// Wrap rewrites the server's entry to launch `palisade proxy --server NAME [ProxyArgs] -- CMD
// ARGS`.
func Wrap(o Options) (Result, error) {
	o, err := o.withDefaults()
	if err != nil {
		return Result{}, err
	}
	return edit(o, func(b []byte) ([]byte, string, error) {
		return WrapBytes(b, o.Server, o.Palisade, o.ProxyArgs)
	}, false)
}

// Unwrap restores the server's entry as it was before Wrap.
func Unwrap(o Options) (Result, error) {
	o, err := o.withDefaults()
	if err != nil {
		return Result{}, err
	}
	return edit(o, func(b []byte) ([]byte, string, error) { return UnwrapBytes(b, o.Server) }, true)
}

func (o Options) withDefaults() (Options, error) {
	if o.Server == "" {
		return o, errors.New("wrap: a server name is required")
	}
	if o.Palisade == "" {
		exe, err := os.Executable()
		if err != nil {
			return o, fmt.Errorf("wrap: palisade path: %w", err)
		}
		o.Palisade = exe
	}
	if o.Home == "" {
		o.Home, _ = os.UserHomeDir()
	}
	if o.Cwd == "" {
		o.Cwd, _ = os.Getwd()
	}
	return o, nil
}

func edit(o Options, f func([]byte) ([]byte, string, error), unwrapping bool) (Result, error) {
	file := o.Config
	if file == "" {
		var err error
		if file, err = find(o, unwrapping); err != nil {
			return Result{}, err
		}
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return Result{}, fmt.Errorf("wrap: %w", err)
	}
	out, where, err := f(b)
	if err != nil {
		return Result{}, fmt.Errorf("%s: %w", file, err)
	}
	st, err := os.Stat(file)
	if err != nil {
		return Result{}, fmt.Errorf("wrap: %w", err)
	}
	bak := file + ".bak"
	if err := os.WriteFile(bak, b, st.Mode().Perm()); err != nil {
		return Result{}, fmt.Errorf("wrap: backup: %w", err)
	}
	tmp := file + ".palisade.tmp"
	if err := os.WriteFile(tmp, out, st.Mode().Perm()); err != nil {
		return Result{}, fmt.Errorf("wrap: %w", err)
	}
	if err := os.Rename(tmp, file); err != nil {
		_ = os.Remove(tmp)
		return Result{}, fmt.Errorf("wrap: %w", err)
	}
	return Result{File: file, Backup: bak, Where: where}, nil
}

// find searches KnownPaths for the one file holding the server.
func find(o Options, unwrapping bool) (string, error) {
	var hits, searched []string
	for _, p := range KnownPaths(o.Home, o.Cwd) {
		searched = append(searched, p)
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		if locs, err := locate(b, o.Server); err == nil && len(locs) > 0 {
			hits = append(hits, p)
		}
	}
	switch len(hits) {
	case 0:
		return "", fmt.Errorf("%w: %q is in none of %s (name one with --config)", ErrNotFound, o.Server, strings.Join(searched, ", "))
	case 1:
		return hits[0], nil
	}
	return "", fmt.Errorf("%w: %q is in %s; name one with --config", ErrAmbiguous, o.Server, strings.Join(hits, " and "))
}

// location is one server entry in a config.
type location struct {
	where string
	entry span
}

// locate finds the server under mcpServers at the top level and under projects.*.mcpServers
// (Claude Code's ~/.claude.json).
func locate(b []byte, server string) ([]location, error) {
	if !json.Valid(b) {
		return nil, ErrInvalid
	}
	i := skipWS(b, 0)
	end, err := skipValue(b, i)
	if err != nil {
		return nil, err
	}
	top, err := members(b, span{i, end})
	if err != nil {
		return nil, fmt.Errorf("%w: the top level must be an object", ErrInvalid)
	}
	var out []location
	inServers := func(where string, s span) error {
		ms, err := members(b, s)
		if err != nil {
			return nil // not an object: not ours to judge
		}
		if m, ok := last(ms, server); ok {
			out = append(out, location{where: where + "." + server, entry: m.val})
		}
		return nil
	}
	if m, ok := last(top, "mcpServers"); ok {
		_ = inServers("mcpServers", m.val)
	}
	if m, ok := last(top, "projects"); ok {
		if projects, err := members(b, m.val); err == nil {
			for _, p := range projects {
				if ms, err := members(b, p.val); err == nil {
					if s, ok := last(ms, "mcpServers"); ok {
						kb, _ := json.Marshal(p.key)
						_ = inServers("projects["+string(kb)+"].mcpServers", s.val)
					}
				}
			}
		}
	}
	return out, nil
}

func locateOne(b []byte, server string) (location, error) {
	locs, err := locate(b, server)
	if err != nil {
		return location{}, err
	}
	switch len(locs) {
	case 0:
		return location{}, fmt.Errorf("%w: %q", ErrNotFound, server)
	case 1:
		return locs[0], nil
	}
	var ws []string
	for _, l := range locs {
		ws = append(ws, l.where)
	}
	return location{}, fmt.Errorf("%w: %s", ErrAmbiguous, strings.Join(ws, ", "))
}

// entry is a server entry's command and args.
type entry struct {
	cmd, args   member
	hasArgs     bool
	argElements []span
}

func readEntry(b []byte, l location) (entry, error) {
	ms, err := members(b, l.entry)
	if err != nil {
		return entry{}, fmt.Errorf("%w: %s is not an object", ErrNotStdio, l.where)
	}
	var e entry
	var ok bool
	if e.cmd, ok = last(ms, "command"); !ok {
		return entry{}, fmt.Errorf("%w: %s has no command: it is a remote server (url); wrap runs local ones. Put the gateway in front of it instead: `palisade serve` with upstreams: [{name: ..., url: ...}], and point the client at the gateway's /mcp/<name>", ErrNotStdio, l.where)
	}
	if _, ok := str(b, e.cmd.val); !ok {
		return entry{}, fmt.Errorf("%w: %s.command is not a string", ErrNotStdio, l.where)
	}
	if t, ok := last(ms, "type"); ok {
		if v, _ := str(b, t.val); v != "" && v != "stdio" {
			return entry{}, fmt.Errorf("%w: %s has type %q", ErrNotStdio, l.where, v)
		}
	}
	if e.args, e.hasArgs = last(ms, "args"); e.hasArgs {
		if e.argElements, err = elements(b, e.args.val); err != nil {
			return entry{}, fmt.Errorf("%w: %s.args is not an array", ErrInvalid, l.where)
		}
		for _, el := range e.argElements {
			if _, ok := str(b, el); !ok {
				return entry{}, fmt.Errorf("%w: %s.args holds a non-string", ErrInvalid, l.where)
			}
		}
	}
	return e, nil
}

// wrapped reports whether the entry already runs palisade proxy.
func (e entry) wrapped(b []byte) bool {
	if !e.hasArgs || len(e.argElements) < 4 {
		return false
	}
	first, _ := str(b, e.argElements[0])
	cmd, _ := str(b, e.cmd.val)
	return first == "proxy" && strings.HasPrefix(filepath.Base(cmd), "palisade")
}

type edit1 struct {
	at   span
	text []byte
}

// apply replaces spans (non-overlapping) in b.
func apply(b []byte, edits ...edit1) []byte {
	out := append([]byte(nil), b...)
	// Apply from the last span back so earlier offsets stay valid.
	sort.Slice(edits, func(i, j int) bool { return edits[i].at.start < edits[j].at.start })
	for i := len(edits) - 1; i >= 0; i-- {
		e := edits[i]
		out = append(out[:e.at.start], append(append([]byte(nil), e.text...), out[e.at.end:]...)...)
	}
	return out
}

func jsonString(s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return bytes.TrimRight(buf.Bytes(), "\n")
}

// WrapBytes returns the config with the server's entry wrapped, and where the entry sits. The
// result is validated: it parses, the entry runs palisade proxy, and UnwrapBytes gives back b.
func WrapBytes(b []byte, server, palisade string, proxyArgs []string) ([]byte, string, error) {
	l, err := locateOne(b, server)
	if err != nil {
		return nil, "", err
	}
	e, err := readEntry(b, l)
	if err != nil {
		return nil, "", err
	}
	if e.wrapped(b) {
		return nil, "", fmt.Errorf("%w: %s already runs palisade proxy", ErrAlreadyWrapped, l.where)
	}
	cmdRaw := b[e.cmd.val.start:e.cmd.val.end]
	var head bytes.Buffer
	head.WriteString(`["proxy","--server",`)
	head.Write(jsonString(server))
	for _, a := range proxyArgs {
		head.WriteByte(',')
		head.Write(jsonString(a))
	}
	var out []byte
	if e.hasArgs {
		head.WriteString(`,"--",`)
		head.Write(cmdRaw)
		if len(e.argElements) > 0 {
			head.WriteByte(',')
		}
		head.Write(b[e.args.val.start+1 : e.args.val.end])
		out = apply(b, edit1{e.cmd.val, jsonString(palisade)}, edit1{e.args.val, head.Bytes()})
	} else {
		head.WriteString(`,"` + InsertedArgs + `","--",`)
		head.Write(cmdRaw)
		head.WriteByte(']')
		text := append(jsonString(palisade), `, "args": `...)
		text = append(text, head.Bytes()...)
		out = apply(b, edit1{e.cmd.val, text})
	}
	if err := checkWrapped(out, server, palisade); err != nil {
		return nil, "", err
	}
	back, _, err := UnwrapBytes(out, server)
	if err != nil || !bytes.Equal(back, b) {
		return nil, "", fmt.Errorf("wrap: refusing to write: unwrapping the result would not restore the file exactly (%v)", err)
	}
	return out, l.where, nil
}

func checkWrapped(b []byte, server, palisade string) error {
	l, err := locateOne(b, server)
	if err != nil {
		return fmt.Errorf("wrap: result invalid: %w", err)
	}
	e, err := readEntry(b, l)
	if err != nil {
		return fmt.Errorf("wrap: result invalid: %w", err)
	}
	if cmd, _ := str(b, e.cmd.val); cmd != palisade || !e.wrapped(b) {
		return errors.New("wrap: result invalid: the entry does not run palisade proxy")
	}
	return nil
}

// UnwrapBytes returns the config with the server's entry restored, and where the entry sits.
func UnwrapBytes(b []byte, server string) ([]byte, string, error) {
	l, err := locateOne(b, server)
	if err != nil {
		return nil, "", err
	}
	e, err := readEntry(b, l)
	if err != nil {
		return nil, "", err
	}
	if !e.wrapped(b) {
		return nil, "", fmt.Errorf("%w: %s", ErrNotWrapped, l.where)
	}
	els := e.argElements
	dash, inserted := -1, false
	for i := 3; i < len(els); i++ {
		v, _ := str(b, els[i])
		if v == InsertedArgs {
			inserted = true
		}
		if v == "--" {
			dash = i
			break
		}
	}
	if dash < 0 || dash+1 >= len(els) {
		return nil, "", fmt.Errorf("%w: %s.args has no `-- COMMAND`", ErrNotWrapped, l.where)
	}
	orig := els[dash+1]
	cmdRaw := b[orig.start:orig.end]
	var out []byte
	if inserted {
		between := b[e.cmd.val.end:e.args.val.start]
		if string(between) != `, "args": ` || dash+2 != len(els) {
			return nil, "", fmt.Errorf("wrap: %s was edited after wrapping; restore it from the .bak file", l.where)
		}
		out = apply(b, edit1{span{e.cmd.val.start, e.args.val.end}, cmdRaw})
	} else {
		rest := orig.end
		if rest < len(b) && b[rest] == ',' {
			rest++
		}
		args := append([]byte("["), b[rest:e.args.val.end]...)
		out = apply(b, edit1{e.cmd.val, cmdRaw}, edit1{e.args.val, args})
	}
	if !json.Valid(out) {
		return nil, "", fmt.Errorf("wrap: %s: restoring would not give valid JSON; restore it from the .bak file", l.where)
	}
	return out, l.where, nil
}
