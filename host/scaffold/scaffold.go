package scaffold

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"text/template"

	"github.com/added060/palisade/sdk"
)

//go:embed all:templates
var templates embed.FS

// Langs lists the languages New supports.
var Langs = []string{"go", "rust", "c", "assemblyscript"}

// Errors New returns (wrapped).
var (
	ErrLang     = errors.New("scaffold: unknown language")
	ErrName     = errors.New("scaffold: invalid plugin name")
	ErrNotEmpty = errors.New("scaffold: directory is not empty")
)

var validName = regexp.MustCompile(`^[a-z][a-z0-9-]{0,62}$`)

// vendored maps, per language, SDK files (paths in sdk.Sources) to their place in the project.
var vendored = map[string]map[string]string{
	"rust": {
		"rust/Cargo.toml":    "palisade-sdk/Cargo.toml",
		"rust/src/lib.rs":    "palisade-sdk/src/lib.rs",
		"rust/src/json.rs":   "palisade-sdk/src/json.rs",
		"rust/src/kernel.rs": "palisade-sdk/src/kernel.rs",
	},
	"c": {"c/palisade.h": "palisade.h"},
	"assemblyscript": {
		"assemblyscript/package.json":      "palisade-sdk/package.json",
		"assemblyscript/index.ts":          "palisade-sdk/index.ts",
		"assemblyscript/assembly/index.ts": "palisade-sdk/assembly/index.ts",
		"assemblyscript/assembly/json.ts":  "palisade-sdk/assembly/json.ts",
	},
}

var langNotes = map[string]string{
	"go":             "\nBuilt with the standard Go toolchain (`GOOS=wasip1 GOARCH=wasm`, Go ≥ 1.24 for `go:wasmexport`), on the direct calling convention (sdk/ABI.md): no go-pdk, no Extism kernel.\n",
	"rust":           "\n`palisade-sdk/` is a vendored copy of Palisade's dependency-free Rust SDK (sdk/rust).\n",
	"c":              "\n`palisade.h` is a vendored copy of Palisade's single-header C SDK (sdk/c).\n",
	"assemblyscript": "\n`palisade-sdk/` is a vendored copy of Palisade's AssemblyScript SDK (sdk/assemblyscript), used through a `file:` dependency, on the direct calling convention (sdk/ABI.md).\n",
}

type data struct {
	Name      string // plugin name, e.g. "deny-tools"
	Ident     string // the name as an identifier, e.g. "deny_tools"
	Lang      string
	LangNotes string
}

// New writes a plugin project named name in language lang into dir, which must not exist or be
// empty. The project builds with `make build` (build/NAME.wasm) and tests with `make test`.
func New(lang, name, dir string) error {
	if !slices.Contains(Langs, lang) {
		return fmt.Errorf("%w %q (want one of %s)", ErrLang, lang, strings.Join(Langs, ", "))
	}
	if !validName.MatchString(name) {
		return fmt.Errorf("%w %q: use lower case letters, digits and '-', starting with a letter", ErrName, name)
	}
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return fmt.Errorf("%w: %s", ErrNotEmpty, dir)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("scaffold: %w", err)
	}
	d := data{Name: name, Ident: strings.ReplaceAll(name, "-", "_"), Lang: lang, LangNotes: langNotes[lang]}
	files := map[string][]byte{}
	for _, root := range []string{"templates/common", "templates/" + lang} {
		err := fs.WalkDir(templates, root, func(p string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() {
				return err
			}
			b, err := templates.ReadFile(p)
			if err != nil {
				return err
			}
			rel := strings.TrimPrefix(p, root+"/")
			if strings.HasSuffix(rel, ".tmpl") {
				rel = strings.TrimSuffix(rel, ".tmpl")
				t, err := template.New(rel).Option("missingkey=error").Parse(string(b))
				if err != nil {
					return fmt.Errorf("template %s: %w", p, err)
				}
				var out bytes.Buffer
				if err := t.Execute(&out, d); err != nil {
					return fmt.Errorf("template %s: %w", p, err)
				}
				b = out.Bytes()
			}
			files[rel] = b
			return nil
		})
		if err != nil {
			return fmt.Errorf("scaffold: %w", err)
		}
	}
	// Every Makefile gets the shared check target.
	files["Makefile"] = append(files["Makefile"], files["Makefile.check"]...)
	delete(files, "Makefile.check")
	for from, to := range vendored[lang] {
		b, err := sdk.Sources.ReadFile(from)
		if err != nil {
			return fmt.Errorf("scaffold: vendor %s: %w", from, err)
		}
		files[to] = b
	}
	for rel, b := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("scaffold: %w", err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return fmt.Errorf("scaffold: %w", err)
		}
	}
	ignore := "build/\nnode_modules/\ntarget/\n"
	if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte(ignore), 0o644); err != nil {
		return fmt.Errorf("scaffold: %w", err)
	}
	return nil
}

// Files lists the paths New writes for lang (slash-separated, sorted), for help output and tests.
func Files(lang string) ([]string, error) {
	if !slices.Contains(Langs, lang) {
		return nil, fmt.Errorf("%w %q", ErrLang, lang)
	}
	set := map[string]bool{".gitignore": true}
	for _, root := range []string{"templates/common", "templates/" + lang} {
		fs.WalkDir(templates, root, func(p string, e fs.DirEntry, err error) error {
			if err == nil && !e.IsDir() {
				rel := strings.TrimSuffix(strings.TrimPrefix(p, root+"/"), ".tmpl")
				if rel != "Makefile.check" {
					set[rel] = true
				}
			}
			return nil
		})
	}
	for _, to := range vendored[lang] {
		set[to] = true
	}
	out := make([]string, 0, len(set))
	for p := range set {
		out = append(out, path.Clean(p))
	}
	slices.Sort(out)
	return out, nil
}
