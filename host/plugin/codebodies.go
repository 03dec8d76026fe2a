package plugin

import (
	"errors"
	"reflect"
	"unsafe"

	"github.com/tetratelabs/wazero"
)

// errBodiesShape: the compiled module is not laid out as dropCodeBodies expects (another wazero
// version); nothing was released, which costs memory, never correctness.
var errBodiesShape = errors.New("wazero's compiled module has another shape than v1.12's; function bodies kept")

// dropCodeBodies releases the function bodies (and expanded local types) that wazero keeps in a
// compiled module's decoded form (a local's type takes 8 bytes there), and returns how many
// bytes it let go. wazero reads them only while compiling: both of its engines compile every
// function in CompileModule, and instantiation uses the machine code, types, globals, tables and
// data segments, never a body. It keeps them for the compiled module's life anyway (and each
// instance points at that decoded module), which for plugins/firstparty is 6.2 MB of the Go
// heap and, at the host's GC percent of 50, about 9 MB of resident memory.
//
// wazero offers no option for this, so the fields are reached by reflection: the
// *wazero.compiledModule's module (*wasm.Module), its CodeSection, each Code's Body and
// LocalTypes, as in wazero v1.12.0. Every step checks the shape it expects first and, finding
// another, changes nothing and returns errBodiesShape; TestDropCodeBodies fails then, so a
// wazero upgrade that moves them is seen rather than silently paying the memory again.
func dropCodeBodies(c wazero.CompiledModule) (int, error) {
	v := reflect.ValueOf(c)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return 0, errBodiesShape
	}
	mod := v.Elem().FieldByName("module")
	if !mod.IsValid() || mod.Kind() != reflect.Pointer || mod.IsNil() || mod.Elem().Kind() != reflect.Struct {
		return 0, errBodiesShape
	}
	code := mod.Elem().FieldByName("CodeSection")
	if !code.IsValid() || code.Kind() != reflect.Slice || code.Type().Elem().Kind() != reflect.Struct {
		return 0, errBodiesShape
	}
	ct := code.Type().Elem()
	var fields [2]int
	for i, name := range []string{"Body", "LocalTypes"} { // []byte, []wasm.ValueType (uint64)
		f, ok := ct.FieldByName(name)
		if !ok || len(f.Index) != 1 || f.Type.Kind() != reflect.Slice {
			return 0, errBodiesShape
		}
		if k := f.Type.Elem().Kind(); k != reflect.Uint8 && k != reflect.Uint64 {
			return 0, errBodiesShape
		}
		fields[i] = f.Index[0]
	}
	n := 0
	for i := range code.Len() {
		fn := code.Index(i) // addressable: an element of the module's slice
		for _, fi := range fields {
			f := fn.Field(fi)
			n += f.Cap() * int(f.Type().Elem().Size())
			reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem().SetZero()
		}
	}
	return n, nil
}
