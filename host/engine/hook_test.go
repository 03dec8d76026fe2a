package engine

import (
	"slices"
	"testing"
)

func TestMCPCandidates(t *testing.T) {
	type mt = MCPTool
	for _, tc := range []struct {
		label   string
		name    string
		servers []string
		want    []mt
	}{
		{"built-in", "Bash", []string{"github"}, nil},
		{"no tool part", "mcp__github", nil, nil},
		{"plain", "mcp__github__create_issue", []string{"github"}, []mt{{"github", "create_issue"}}},
		{"tool with __, server known", "mcp__db__drop__table", []string{"db"}, []mt{{"db", "drop__table"}}},
		{"server with __, known", "mcp__gh__corp__delete_repo", []string{"gh__corp"}, []mt{{"gh__corp", "delete_repo"}}},
		{"both readings configured", "mcp__db__drop__table", []string{"db", "db__drop"}, []mt{{"db", "drop__table"}, {"db__drop", "table"}}},
		{"unknown server: every split", "mcp__gh__corp__delete_repo", nil, []mt{{"gh", "corp__delete_repo"}, {"gh__corp", "delete_repo"}}},
		{"unknown server among known ones", "mcp__a__b__c", []string{"zzz"}, []mt{{"a", "b__c"}, {"a__b", "c"}}},
		{"normalized server name", "mcp__my_server__x", []string{"my.server"}, []mt{{"my.server", "x"}}},
		{"three underscores", "mcp__a___b", nil, []mt{{"a", "_b"}, {"a_", "b"}}},
	} {
		t.Run(tc.label, func(t *testing.T) {
			got := MCPCandidates(tc.name, tc.servers)
			if !slices.Equal(got, tc.want) {
				t.Errorf("MCPCandidates(%q, %q) = %v, want %v", tc.name, tc.servers, got, tc.want)
			}
		})
	}
}
