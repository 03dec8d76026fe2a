package glob

import "testing"

func TestMatch(t *testing.T) {
	for _, tc := range []struct {
		pat, name string
		want      bool
	}{
		{"fs/*", "fs/read", true},
		{"fs/*", "fs/a/b", false}, // * never crosses /
		{"fs/**", "fs/a/b", true},
		{"fs/**", "fs/", true},
		{"**", "a/b/c", true},
		{"*", "", true},
		{"*", "a/b", false},
		{"get-?nv", "get-env", true},
		{"get-?nv", "get-nv", false},
		{"a?c", "a/c", false}, // ? never matches /
		{"echo", "echo", true},
		{"echo", "echoo", false},
		{"*-env", "get-env", true},
		{"*env*", "printenv", true},
		{"/etc/**", "/etc/ssh/sshd_config", true},
		{"/etc/*", "/etc/ssh/sshd_config", false},
		{"**/.env", "/home/u/app/.env", true},
		{"**/.env", ".env", false},
		{"/home/*/.ssh/**", "/home/alice/.ssh/id_rsa", true},
		{"/home/*/.ssh/**", "/home/alice/x/.ssh/id_rsa", false},
		{"a**b", "a/x/y/b", true},
		{"a*b*c", "aXbYc", true},
		{"a*b*c", "aXbY/c", false},
		{"", "", true},
		{"", "x", false},
		{"db_*", "db_drop_table", true},
	} {
		t.Run(tc.pat+" "+tc.name, func(t *testing.T) {
			if got := Match(tc.pat, tc.name); got != tc.want {
				t.Errorf("Match(%q, %q) = %v, want %v", tc.pat, tc.name, got, tc.want)
			}
		})
	}
}

func TestAny(t *testing.T) {
	if !Any(nil, "x") {
		t.Error("empty list must match")
	}
	if Any([]string{"a", "b"}, "c") {
		t.Error("c matched [a b]")
	}
	if !Any([]string{"a", "c*"}, "cat") {
		t.Error("cat did not match c*")
	}
}

func FuzzMatch(f *testing.F) {
	for _, s := range [][2]string{{"fs/*", "fs/a"}, {"**", "a/b"}, {"a?c*", "abcd"}, {"***", "x"}, {"*?**?", "/a/"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pat, name string) {
		got := Match(pat, name)
		// A pattern without wildcards matches only itself.
		plain := true
		for i := 0; i < len(pat); i++ {
			if pat[i] == '*' || pat[i] == '?' {
				plain = false
			}
		}
		if plain && got != (pat == name) {
			t.Fatalf("Match(%q, %q) = %v for a literal pattern", pat, name, got)
		}
		if Match("**", name) == false {
			t.Fatalf("** must match %q", name)
		}
	})
}
