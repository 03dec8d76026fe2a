package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// The reference implementation (encoding/json tokens): slow, obviously right. scan.go must agree.
func ambiguousKeysSlow(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return walkKeysSlow(dec, "$")
}

func walkKeysSlow(dec *json.Decoder, path string) error {
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("%w: %v", ErrNotJSON, err)
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return nil
	}
	switch d {
	case '{':
		seen := map[string]string{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return fmt.Errorf("%w: %v", ErrNotJSON, err)
			}
			k, _ := kt.(string)
			fold := strings.ToLower(strings.ToUpper(k))
			if prev, dup := seen[fold]; dup {
				return fmt.Errorf("%w: %s has %q and %q", ErrAmbiguousKeys, path, prev, k)
			}
			seen[fold] = k
			if err := walkKeysSlow(dec, path+"."+k); err != nil {
				return err
			}
		}
	case '[':
		for i := 0; dec.More(); i++ {
			if err := walkKeysSlow(dec, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	}
	if _, err := dec.Token(); err != nil { // the closing delimiter
		return fmt.Errorf("%w: %v", ErrNotJSON, err)
	}
	return nil
}
