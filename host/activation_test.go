package host_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestOneActivationPath: every mode activates bundles through bundle.Manager, made by
// gateway.Core.NewManager with the core's trust policy. Outside host/bundle no program code calls
// bundle.Build (which builds without checking a signature), and only the Core makes a manager
// (policy test's library fallback, which has no trust policy to apply, is the one exception).
func TestOneActivationPath(t *testing.T) {
	allowed := map[string][]string{
		"Build":      {"host/bundle/", "host/internal/testenv/"},
		"NewManager": {"host/bundle/", "host/gateway/core.go", "host/policytest/policytest.go"},
	}
	found := map[string]int{}
	fset := token.NewFileSet()
	for _, root := range []string{"../cmd", "../host", "../tools", "../plugins", "../examples"} {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
				return err
			}
			f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			rel := strings.TrimPrefix(filepath.ToSlash(p), "../")
			names := map[string]bool{} // what host/bundle is imported as in this file
			for _, im := range f.Imports {
				if path, _ := strconv.Unquote(im.Path.Value); path == mod+"host/bundle" {
					if im.Name != nil {
						names[im.Name.Name] = true
					} else {
						names["bundle"] = true
					}
				}
			}
			inBundle := strings.HasPrefix(rel, "host/bundle/")
			ast.Inspect(f, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				var fn string
				switch x := call.Fun.(type) {
				case *ast.SelectorExpr:
					if id, ok := x.X.(*ast.Ident); ok && names[id.Name] {
						fn = x.Sel.Name
					}
				case *ast.Ident:
					if inBundle {
						fn = x.Name
					}
				}
				ok = false
				for _, a := range allowed[fn] {
					ok = ok || strings.HasPrefix(rel, a)
				}
				if allowed[fn] != nil {
					found[fn]++
					if !ok {
						t.Errorf("%s: calls bundle.%s; activate through gateway.Core.NewManager (bundle.Manager)", fset.Position(call.Pos()), fn)
					}
				}
				return true
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if found["Build"] == 0 || found["NewManager"] == 0 {
		t.Fatalf("the scan found no call (%v): it checks nothing", found)
	}
}
