package jsonenc

import (
	"encoding/json"
	"testing"

	"github.com/added060/palisade/sdk/go/abi"
)

// TestMembersEqualMarshal: an object written with the optional members, empty and set, and
// the principal, is json.Marshal's encoding of the same struct.
func TestMembersEqualMarshal(t *testing.T) {
	type obj struct {
		S  string          `json:"s,omitempty"`
		L  []string        `json:"l,omitempty"`
		N  int64           `json:"n,omitempty"`
		B  bool            `json:"b,omitempty"`
		R  json.RawMessage `json:"r,omitempty"`
		Pr *abi.Principal  `json:"principal,omitempty"`
	}
	for _, o := range []obj{
		{},
		{S: "a<b>&\u2028\"", L: []string{"x", "</script>"}, N: -7, B: true, R: json.RawMessage(`{ "k" : [1, 2] }`)},
		{Pr: &abi.Principal{Issuer: "https://idp", Subject: "alice"}},
		{S: "s", Pr: &abi.Principal{Issuer: "i", Subject: "s", ClientID: "c", Scopes: []string{"a", "b"}, Claims: map[string]any{"z": 1, "groups": []any{"sre"}}}},
	} {
		want, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		dst := append([]byte(nil), '{')
		n := len(dst)
		dst = OptString(dst, `,"s":`, o.S)
		dst = OptStrings(dst, `,"l":`, o.L)
		dst = OptInt(dst, `,"n":`, o.N)
		dst = OptTrue(dst, `,"b":true`, o.B)
		dst = OptRaw(dst, `,"r":`, o.R)
		if dst, err = AppendPrincipal(dst, o.Pr); err != nil {
			t.Fatal(err)
		}
		dst = CloseObject(dst, n)
		if string(dst) != string(want) {
			t.Errorf("got  %s\nwant %s", dst, want)
		}
	}
}
