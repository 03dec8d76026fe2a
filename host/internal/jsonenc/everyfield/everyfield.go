// Package everyfield fills a struct's every field by reflection for the hand-written JSON
// encoders' tests (host/chain's envelope, host/audit's event).
package everyfield

import (
	"encoding/json"
	"reflect"
	"time"
)

// Fill sets every settable field of v to a value that is not its zero value: strings with
// characters encoding/json escapes, one element in each slice and map, raw JSON with white
// space and HTML characters for json.RawMessage. A time.Time is left to the caller (its
// encoding has a range json.Marshal refuses). The hand encoders' every-field tests (host/chain,
// host/audit) fill their structs with it: a field added later and not encoded fails them.
func Fill(v reflect.Value) { fill(v, 0) }

func fill(v reflect.Value, depth int) {
	if depth > 6 {
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString("v<&")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(7)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(7)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(0.25)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), depth+1)
	case reflect.Struct:
		if v.Type() == reflect.TypeOf(time.Time{}) {
			return // set by the caller
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), depth+1)
			}
		}
	case reflect.Slice:
		if v.Type() == reflect.TypeOf(json.RawMessage(nil)) {
			v.SetBytes([]byte(` {"a" : ["<b>", 1]} `))
			return
		}
		s := reflect.MakeSlice(v.Type(), 1, 1)
		fill(s.Index(0), depth+1)
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k := reflect.New(v.Type().Key()).Elem()
		k.SetString("k")
		e := reflect.New(v.Type().Elem()).Elem()
		if e.Kind() == reflect.Interface {
			e.Set(reflect.ValueOf("v<&"))
		} else {
			fill(e, depth+1)
		}
		m.SetMapIndex(k, e)
		v.Set(m)
	}
}
