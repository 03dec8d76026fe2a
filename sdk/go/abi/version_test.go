package abi_test

import (
	"strings"
	"testing"

	"github.com/added060/palisade/sdk/go/abi"
)

func TestCompatible(t *testing.T) {
	for _, tc := range []struct {
		v    string
		want string // "" = compatible, else a substring of the error
	}{
		{"1.0", ""},
		{"1.1", ""},
		{"1.2", ""},
		{"1.3", "newer than the host's envelope schema 1.2"},
		{"1.10", "newer"},
		{"2.0", "major 2 differs"},
		{"0.9", "major 0 differs"},
		{"1", "not MAJOR.MINOR"},
		{"one.two", "not MAJOR.MINOR"},
		{"+1.0", "not MAJOR.MINOR"},
		{"", "not MAJOR.MINOR"},
	} {
		t.Run(tc.v, func(t *testing.T) {
			err := abi.Compatible(tc.v)
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("Compatible(%q) = %v, want %q", tc.v, err, tc.want)
			}
		})
	}
}
