package everyfield

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

// TestFillSetsEveryField: no exported field, nested or in a slice, map or pointer, stays zero,
// but a time.Time, which the caller sets.
func TestFillSetsEveryField(t *testing.T) {
	type inner struct {
		S string
		N int
	}
	type outer struct {
		S   string
		B   bool
		U   uint8
		F   float64
		R   json.RawMessage
		P   *inner
		L   []inner
		M   map[string]any
		MS  map[string]inner
		T   time.Time
		low string
	}
	var o outer
	Fill(reflect.ValueOf(&o).Elem())
	v := reflect.ValueOf(o)
	for i := range v.NumField() {
		f := v.Type().Field(i)
		if zero := v.Field(i).IsZero(); zero != (f.Name == "T" || f.Name == "low") {
			t.Errorf("field %s: zero = %v", f.Name, zero)
		}
	}
	if o.low != "" {
		t.Errorf("an unexported field was set: %q", o.low)
	}
	if o.P.S == "" || o.L[0].N == 0 || o.MS["k"].S == "" {
		t.Errorf("nested values left zero: %+v", o)
	}
}
