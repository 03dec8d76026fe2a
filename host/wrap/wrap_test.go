package wrap_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/added060/palisade/host/wrap"
)

const pal = "/opt/palisade/bin/palisade"

// entryOf decodes one server entry the way a client would.
func entryOf(t *testing.T, b []byte, path ...string) (string, []string) {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("result is not JSON: %v", err)
	}
	for _, p := range path {
		v = v.(map[string]any)[p]
	}
	m := v.(map[string]any)
	var args []string
	if a, ok := m["args"].([]any); ok {
		for _, x := range a {
			args = append(args, x.(string))
		}
	}
	return m["command"].(string), args
}

func TestWrapUnwrapRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		file, server string
		path         []string
		wantCmd      string
		wantArgs     []string
	}{
		{"claude_desktop_config.json", "filesystem", []string{"mcpServers", "filesystem"}, "npx", []string{"-y", "@modelcontextprotocol/server-filesystem", "/Users/dev/Desktop"}},
		{"claude_desktop_config.json", "memory", []string{"mcpServers", "memory"}, "npx", []string{"-y", "@modelcontextprotocol/server-memory"}},
		{"claude_desktop_config.json", "noargs", []string{"mcpServers", "noargs"}, "/usr/local/bin/my-server", nil},
		{"claude_desktop_config.json", "emptyargs", []string{"mcpServers", "emptyargs"}, "srv", nil},
		{"claude.json", "sqlite", []string{"projects", "/home/dev/app", "mcpServers", "sqlite"}, "uvx", []string{"mcp-server-sqlite", "--db-path", "/home/dev/app/db.sqlite"}},
		{"cursor_mcp.json", "fetch", []string{"mcpServers", "fetch"}, "uvx", []string{"mcp-server-fetch"}},
		{"cursor_mcp.json", `weird"name`, []string{"mcpServers", `weird"name`}, `C:\tools\srv.exe`, []string{"--port", "1"}},
	} {
		t.Run(tc.file+" "+tc.server, func(t *testing.T) {
			orig, err := os.ReadFile(filepath.Join("testdata", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			out, _, err := wrap.WrapBytes(orig, tc.server, pal, []string{"--bundle", "/etc/palisade/bundle"})
			if err != nil {
				t.Fatal(err)
			}
			cmd, args := entryOf(t, out, tc.path...)
			if cmd != pal || args[0] != "proxy" || args[2] != tc.server || args[3] != "--bundle" {
				t.Fatalf("wrapped entry: %s %q", cmd, args)
			}
			dash := slices.Index(args, "--")
			if args[dash+1] != tc.wantCmd || !slices.Equal(args[dash+2:], tc.wantArgs) {
				t.Errorf("wrapped entry runs %q, want %s %q", args[dash+1:], tc.wantCmd, tc.wantArgs)
			}
			if _, _, err := wrap.WrapBytes(out, tc.server, pal, nil); !errors.Is(err, wrap.ErrAlreadyWrapped) {
				t.Errorf("second wrap: %v, want ErrAlreadyWrapped", err)
			}
			back, _, err := wrap.UnwrapBytes(out, tc.server)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(back, orig) {
				t.Errorf("unwrap did not restore the bytes:\n%s\nwant\n%s", back, orig)
			}
		})
	}
}

func TestWrapRefuses(t *testing.T) {
	desktop, _ := os.ReadFile("testdata/claude_desktop_config.json")
	claude, _ := os.ReadFile("testdata/claude.json")
	for _, tc := range []struct {
		name   string
		b      []byte
		server string
		want   error
	}{
		{"missing", desktop, "nope", wrap.ErrNotFound},
		{"remote", desktop, "remote", wrap.ErrNotStdio},
		{"ambiguous", claude, "github", wrap.ErrAmbiguous},
		{"not json", []byte(`{"mcpServers": {`), "x", wrap.ErrInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, _, err := wrap.WrapBytes(tc.b, tc.server, pal, nil); !errors.Is(err, tc.want) {
				t.Errorf("WrapBytes: %v, want %v", err, tc.want)
			}
		})
	}
	if _, _, err := wrap.UnwrapBytes(desktop, "filesystem"); !errors.Is(err, wrap.ErrNotWrapped) {
		t.Errorf("UnwrapBytes of an unwrapped entry: %v", err)
	}
}

func TestWrapFilesWithSearchAndBackup(t *testing.T) {
	home, cwd := t.TempDir(), t.TempDir()
	orig, _ := os.ReadFile("testdata/cursor_mcp.json")
	cfg := filepath.Join(home, ".cursor", "mcp.json")
	if err := os.MkdirAll(filepath.Dir(cfg), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, orig, 0o600); err != nil {
		t.Fatal(err)
	}
	o := wrap.Options{Server: "fetch", Palisade: pal, Home: home, Cwd: cwd}
	res, err := wrap.Wrap(o)
	if err != nil {
		t.Fatal(err)
	}
	if res.File != cfg {
		t.Fatalf("found %s, want %s", res.File, cfg)
	}
	if bak, _ := os.ReadFile(res.Backup); !bytes.Equal(bak, orig) {
		t.Errorf(".bak does not hold the original")
	}
	if st, _ := os.Stat(cfg); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v not kept", st.Mode())
	}
	if _, err := wrap.Wrap(o); !errors.Is(err, wrap.ErrAlreadyWrapped) {
		t.Errorf("second wrap: %v", err)
	}
	if _, err := wrap.Unwrap(o); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(cfg); !bytes.Equal(got, orig) {
		t.Errorf("wrap then unwrap changed the file:\n%s", got)
	}
	// A project .mcp.json holding the same name makes the search ambiguous.
	if err := os.WriteFile(filepath.Join(cwd, ".mcp.json"), orig, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := wrap.Wrap(o); !errors.Is(err, wrap.ErrAmbiguous) {
		t.Errorf("two configs: %v, want ErrAmbiguous", err)
	}
	o.Config = filepath.Join(cwd, ".mcp.json")
	if _, err := wrap.Wrap(o); err != nil {
		t.Errorf("--config resolves the ambiguity: %v", err)
	}
	if _, err := wrap.Wrap(wrap.Options{Server: "nope", Palisade: pal, Home: home, Cwd: t.TempDir()}); !errors.Is(err, wrap.ErrNotFound) {
		t.Errorf("missing server: %v", err)
	}
}

func FuzzWrapRoundTrip(f *testing.F) {
	for _, p := range []string{"claude_desktop_config.json", "claude.json", "cursor_mcp.json"} {
		b, _ := os.ReadFile(filepath.Join("testdata", p))
		f.Add(b, "filesystem")
		f.Add(b, "fetch")
	}
	f.Add([]byte(`{"mcpServers":{"a":{"command":"x","args":["\u00e9",  "b" ]}}}`), "a")
	f.Add([]byte(`{"mcpServers":{"a":{"args":[],"command":"x"}}}`), "a")
	f.Fuzz(func(t *testing.T, b []byte, server string) {
		out, _, err := wrap.WrapBytes(b, server, pal, nil)
		if err != nil {
			return
		}
		back, _, err := wrap.UnwrapBytes(out, server)
		if err != nil || !bytes.Equal(back, b) {
			t.Fatalf("round trip: %v\n%q\n%q", err, b, back)
		}
	})
}
