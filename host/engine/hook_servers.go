package engine

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
)

// maxClaudeConfigBytes bounds what ClaudeMCPServers reads of one file.
const maxClaudeConfigBytes = 16 << 20

// ClaudeMCPServers returns the MCP server names Claude Code has configured for a session in
// cwd: the mcpServers of every .mcp.json from cwd up to the root, and of ~/.claude.json (user
// scope, and local scope under projects.<dir> for cwd and its parents). home "" is the user's
// home directory; "-" skips ~/.claude.json. Unreadable files are skipped: the caller then judges
// every reading of a tool name, which is stricter, never looser.
func ClaudeMCPServers(cwd, home string) []string {
	var names []string
	add := func(m map[string]json.RawMessage) {
		for k := range m {
			if !slices.Contains(names, k) {
				names = append(names, k)
			}
		}
	}
	var dirs []string
	if cwd != "" && filepath.IsAbs(cwd) {
		for d := filepath.Clean(cwd); ; d = filepath.Dir(d) {
			dirs = append(dirs, d)
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	for _, d := range dirs {
		var f struct {
			MCPServers map[string]json.RawMessage `json:"mcpServers"`
		}
		if readJSON(filepath.Join(d, ".mcp.json"), &f) {
			add(f.MCPServers)
		}
	}
	if home == "-" {
		return names
	}
	if home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return names
		}
		home = h
	}
	var f struct {
		MCPServers map[string]json.RawMessage `json:"mcpServers"`
		Projects   map[string]struct {
			MCPServers map[string]json.RawMessage `json:"mcpServers"`
		} `json:"projects"`
	}
	if readJSON(filepath.Join(home, ".claude.json"), &f) {
		add(f.MCPServers)
		for _, d := range dirs {
			add(f.Projects[d].MCPServers)
		}
	}
	return names
}

func readJSON(path string, v any) bool {
	st, err := os.Stat(path)
	if err != nil || !st.Mode().IsRegular() || st.Size() > maxClaudeConfigBytes {
		return false
	}
	b, err := os.ReadFile(path)
	return err == nil && json.Unmarshal(b, v) == nil
}
