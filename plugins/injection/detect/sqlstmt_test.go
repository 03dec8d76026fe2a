package detect

import "testing"

func TestAnalyzeSQL(t *testing.T) {
	for _, tc := range []struct {
		sql  string
		want string // a finding's rule; "" = none
	}{
		{"SELECT id, name FROM users WHERE active = 1 -- only active users", ""},
		{"SELECT id FROM users LIMIT 5 -- first page", ""},
		{"SELECT a FROM t1 UNION SELECT a FROM t2 ORDER BY a", ""},
		{"SELECT zone FROM sensors WHERE zone = 'B2' UNION SELECT zone FROM sensors_archive WHERE zone = 'B2'", ""},
		{"SELECT * FROM orders WHERE status = 'open' AND total > 100", ""},
		{"SELECT name FROM users WHERE name = 'O''Brien'", ""},
		{"UPDATE users SET name = 'x' WHERE id = 42", ""},
		{"DELETE FROM sessions WHERE expires_at < now()", ""},
		{"CREATE TABLE t (id int primary key); INSERT INTO t VALUES (1)", ""},
		{"SELECT count(*) FROM events /* all */ WHERE kind = 'click'", ""},
		{"SELECT * FROM t WHERE a = 1 OR b = 2", ""},
		{"WITH x AS (SELECT 1) SELECT * FROM x", ""},
		{"SELECT * FROM users WHERE name = '' OR '1'='1'", "sql/tautology"},
		{"SELECT * FROM users WHERE id = 1 OR 1=1", "sql/tautology"},
		{"SELECT * FROM users WHERE name = 'admin'--' AND password = 'x'", "sql/comment_truncation"},
		{"SELECT * FROM products WHERE id = 1 UNION SELECT username, password FROM users", "sql/union"},
		{"SELECT name FROM items WHERE q = 'a' UNION ALL SELECT NULL, NULL, NULL", "sql/union"},
		{"SELECT * FROM users WHERE name = 'x'; DROP TABLE users", "sql/stacked"},
		{"SELECT * FROM users WHERE name = 'x'; DROP TABLE users", "sql/destroy"},
		{"DELETE FROM users", "sql/destroy"},
		{"TRUNCATE audit_log", "sql/destroy"},
		{"UPDATE accounts SET balance = 0", "sql/destroy"},
		{"ALTER TABLE orders ALTER COLUMN note DROP NOT NULL", ""},
		{"ALTER TABLE orders DROP CONSTRAINT IF EXISTS orders_user_fkey", ""},
		{"ALTER TABLE orders ALTER COLUMN created SET DEFAULT now(), ALTER COLUMN note DROP DEFAULT", ""},
		{"CREATE FUNCTION purge() RETURNS void LANGUAGE plpgsql AS $$ BEGIN DELETE FROM t WHERE id = 1; UPDATE t SET x = 'a' WHERE id = 2; END $$;", ""},
		{"CREATE FUNCTION f() RETURNS int AS $body$ SELECT 1; $body$ LANGUAGE sql", ""},
		{"SELECT * FROM t WHERE id = $1", ""},
		{"SELECT * FROM t WHERE name = $$x", "sql/unbalanced_quote"},
		{"ALTER TABLE orders DROP COLUMN note", "sql/destroy"},
		{"ALTER TABLE orders DROP note", "sql/destroy"},
		{"ALTER TABLE orders DROP COLUMN IF EXISTS note", "sql/destroy"},
		{"SELECT * FROM users WHERE name = 'abc", "sql/unbalanced_quote"},
		{"SELECT LOAD_FILE('/etc/passwd')", "sql/dangerous_function"},
		{"SELECT * FROM t WHERE id = 1 AND SLEEP(5)", "sql/dangerous_function"},
		{"COPY t TO PROGRAM 'curl x.example'", "sql/dangerous_function"},
	} {
		t.Run(tc.sql, func(t *testing.T) {
			got := AnalyzeSQL(tc.sql)
			if tc.want == "" {
				if len(got) > 0 {
					t.Errorf("AnalyzeSQL(%q) = %+v, want none", tc.sql, got)
				}
				return
			}
			for _, f := range got {
				if f.Rule == tc.want {
					return
				}
			}
			t.Errorf("AnalyzeSQL(%q) = %+v, want %s", tc.sql, got, tc.want)
		})
	}
}

// TestAnalyzeSQLUncertain: destroying one table's data in a statement of its own is what a
// migration does (a question for a person); dropping a database or a statement a value broke
// out to run is not (issue 26).
func TestAnalyzeSQLUncertain(t *testing.T) {
	for _, tc := range []struct {
		sql       string
		uncertain bool // every finding uncertain
	}{
		{"DROP TABLE post;", true},
		{"-- +goose Down\nDROP TABLE IF EXISTS post;", true},
		{"DELETE FROM comments;", true},
		{"UPDATE authors SET bio = $1;", true},
		{"TRUNCATE audit_log", true},
		{"ALTER TABLE modules DROP COLUMN status;", true},
		{"DROP DATABASE prod", false},
		{"DROP SCHEMA public CASCADE", false},
		{"SHUTDOWN", false},
		{"SELECT * FROM users WHERE name = 'x'; DROP TABLE users", false},
		{"SELECT * FROM t WHERE id = 1 OR 1=1", false},
		{"DROP TABLE a; DROP DATABASE b", false},
		{"CREATE FUNCTION f() RETURNS INTEGER AS '\nDECLARE\n    k RECORD;", true},
		{"CREATE OR REPLACE FUNCTION audit() RETURNS TRIGGER AS $emp_audit$\n BEGIN\n --", true},
		{"SELECT * FROM users WHERE name = 'abc", false},
	} {
		t.Run(tc.sql, func(t *testing.T) {
			got := AnalyzeSQL(tc.sql)
			if len(got) == 0 {
				t.Fatalf("AnalyzeSQL(%q) = none, want a finding", tc.sql)
			}
			all := true
			for _, f := range got {
				all = all && f.Uncertain
			}
			if all != tc.uncertain {
				t.Errorf("AnalyzeSQL(%q) = %+v, want every finding uncertain = %v", tc.sql, got, tc.uncertain)
			}
		})
	}
}
