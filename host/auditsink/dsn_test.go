package auditsink_test

import (
	"strings"
	"testing"

	"github.com/added060/palisade/host/auditsink"
)

// TestCheckDSNNeverRepeatsThePassword: a DSN that does not parse is refused with an error that
// does not repeat it (config errors are printed and logged); a good one passes without a server.
func TestCheckDSNNeverRepeatsThePassword(t *testing.T) {
	for _, tc := range []struct {
		dsn string
		ok  bool
	}{
		{"host=/run/postgresql dbname=palisade", true},
		{"postgres://palisade:secretpw@db.example:5432/palisade?sslmode=require", true},
		{"", false},
		{"postgres://u:secretpw@h:notaport/db", false},
		{"host=/x port=notaport password=secretpw", false},
		{"user=a password='secretpw", false},
		{"postgres://u:secretpw@h/db?sslmode=bogus", false},
	} {
		t.Run(tc.dsn, func(t *testing.T) {
			err := auditsink.CheckDSN(tc.dsn)
			if (err == nil) != tc.ok {
				t.Fatalf("CheckDSN = %v, want ok=%v", err, tc.ok)
			}
			if err != nil && strings.Contains(err.Error(), "secretpw") {
				t.Fatalf("error repeats the password: %v", err)
			}
		})
	}
}
