// Command sbom writes a CycloneDX 1.5 JSON software bill of materials for a Go binary or module,
// with no external generator:
//
//	go run ./tools/sbom -bin build/palisade -name palisade -version v1.2.3 -o palisade.cdx.json
//	go run ./tools/sbom -mod . -o module.cdx.json
//
// With -bin it reads the build info Go links into every binary (debug/buildinfo), so the list is
// exactly the modules compiled in, for any GOOS/GOARCH, plus the Go standard library. With -mod it
// runs `go list -m -json all` in that folder: the whole module graph, test-only modules
// included. Each component has a name, a version and a purl (pkg:golang/...); a replaced module
// is listed as its replacement. Output is deterministic (sorted; the serial number is a hash of
// the components; the timestamp is $SOURCE_DATE_EPOCH when set, else omitted).
package main

import (
	"bytes"
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"time"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("sbom", flag.ContinueOnError)
	fs.SetOutput(stderr)
	bin := fs.String("bin", "", "Go binary to describe (its linked build info)")
	mod := fs.String("mod", "", "module folder to describe (go list -m -json all)")
	out := fs.String("o", "", "output file (default stdout)")
	name := fs.String("name", "", "name of the described component (default: the main module path)")
	version := fs.String("version", "", "its version (default: the one in the build info, else devel)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if (*bin == "") == (*mod == "") {
		fmt.Fprintln(stderr, "sbom: give exactly one of -bin or -mod")
		return 2
	}
	var (
		root Module
		deps []Module
		err  error
	)
	if *bin != "" {
		root, deps, err = fromBinary(*bin)
	} else {
		root, deps, err = fromModule(*mod)
	}
	if err != nil {
		fmt.Fprintf(stderr, "sbom: %v\n", err)
		return 1
	}
	if *name != "" {
		root.Path = *name
	}
	if *version != "" {
		root.Version = *version
	}
	b, err := json.MarshalIndent(Build(root, deps, sourceDate()), "", "  ")
	if err != nil {
		fmt.Fprintf(stderr, "sbom: %v\n", err)
		return 1
	}
	b = append(b, '\n')
	if *out == "" {
		_, err = stdout.Write(b)
	} else {
		err = os.WriteFile(*out, b, 0o644)
	}
	if err != nil {
		fmt.Fprintf(stderr, "sbom: %v\n", err)
		return 1
	}
	return 0
}

// Module is one Go module: path, version and, from go.sum or build info, its h1: hash.
type Module struct {
	Path    string
	Version string
	Sum     string // "h1:..." or ""
}

// fromBinary reads the modules linked into a Go binary; the standard library is one more
// component, at the toolchain's version.
func fromBinary(path string) (Module, []Module, error) {
	bi, err := buildinfo.ReadFile(path)
	if err != nil {
		return Module{}, nil, fmt.Errorf("read build info of %s: %w", path, err)
	}
	root := Module{Path: bi.Main.Path, Version: bi.Main.Version}
	deps := []Module{{Path: "stdlib", Version: bi.GoVersion}}
	for _, d := range bi.Deps {
		m := Module{Path: d.Path, Version: d.Version, Sum: d.Sum}
		if r := d.Replace; r != nil {
			m = Module{Path: r.Path, Version: r.Version, Sum: r.Sum}
		}
		deps = append(deps, m)
	}
	return root, deps, nil
}

// listedModule is the part of `go list -m -json` output used here.
type listedModule struct {
	Path    string
	Version string
	Main    bool
	Sum     string
	Replace *listedModule
}

// fromModule runs `go list -m -json all` in dir.
func fromModule(dir string) (Module, []Module, error) {
	cmd := exec.Command("go", "list", "-m", "-json", "all")
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	b, err := cmd.Output()
	if err != nil {
		return Module{}, nil, fmt.Errorf("go list -m -json all in %s: %w: %s", dir, err, strings.TrimSpace(stderr.String()))
	}
	var root Module
	var deps []Module
	dec := json.NewDecoder(bytes.NewReader(b))
	for {
		var lm listedModule
		if err := dec.Decode(&lm); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return Module{}, nil, fmt.Errorf("decode go list output: %w", err)
		}
		if lm.Main {
			root = Module{Path: lm.Path, Version: lm.Version}
			continue
		}
		m := Module{Path: lm.Path, Version: lm.Version, Sum: lm.Sum}
		if r := lm.Replace; r != nil {
			m = Module{Path: r.Path, Version: r.Version, Sum: r.Sum}
		}
		deps = append(deps, m)
	}
	if root.Path == "" {
		return Module{}, nil, fmt.Errorf("go list in %s: no main module", dir)
	}
	return root, deps, nil
}

// BOM is a CycloneDX 1.5 document, the fields this tool writes.
type BOM struct {
	BOMFormat    string       `json:"bomFormat"`
	SpecVersion  string       `json:"specVersion"`
	SerialNumber string       `json:"serialNumber"`
	Version      int          `json:"version"`
	Metadata     Metadata     `json:"metadata"`
	Components   []Component  `json:"components"`
	Dependencies []Dependency `json:"dependencies"`
}

// Metadata describes the document and the component it is about.
type Metadata struct {
	Timestamp string    `json:"timestamp,omitempty"`
	Tools     Tools     `json:"tools"`
	Component Component `json:"component"`
}

// Tools names the generator.
type Tools struct {
	Components []Component `json:"components"`
}

// Component is one module (or the described binary).
type Component struct {
	Type       string     `json:"type"`
	BOMRef     string     `json:"bom-ref,omitempty"`
	Name       string     `json:"name"`
	Version    string     `json:"version,omitempty"`
	PURL       string     `json:"purl,omitempty"`
	Properties []Property `json:"properties,omitempty"`
}

// Property is a name/value pair; the Go module hash goes here (it is not a plain SHA-256 of
// one file, so it is not a CycloneDX hash).
type Property struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Dependency says which components a component depends on (here: the main one on all).
type Dependency struct {
	Ref       string   `json:"ref"`
	DependsOn []string `json:"dependsOn"`
}

// PURL is the package URL of a Go module: pkg:golang/<path>@<version>, each path segment and the
// version percent-encoded.
func PURL(path, version string) string {
	segs := strings.Split(path, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	p := "pkg:golang/" + strings.Join(segs, "/")
	if version != "" {
		p += "@" + strings.ReplaceAll(url.PathEscape(version), "+", "%2B")
	}
	return p
}

// Build assembles the document: root is the described component, deps its modules (sorted and
// deduplicated here). ts zero leaves the timestamp out.
func Build(root Module, deps []Module, ts time.Time) BOM {
	if root.Version == "" || root.Version == "(devel)" {
		root.Version = "devel"
	}
	seen := map[string]bool{}
	var comps []Component
	for _, d := range deps {
		if d.Path == "" {
			continue
		}
		c := Component{Type: "library", Name: d.Path, Version: d.Version, PURL: PURL(d.Path, d.Version)}
		if d.Path == "stdlib" {
			c.PURL = PURL("stdlib", d.Version)
		}
		if seen[c.PURL] {
			continue
		}
		seen[c.PURL] = true
		c.BOMRef = c.PURL
		if d.Sum != "" {
			c.Properties = []Property{{Name: "golang:module-sum", Value: d.Sum}}
		}
		comps = append(comps, c)
	}
	sort.Slice(comps, func(i, j int) bool { return comps[i].PURL < comps[j].PURL })
	top := Component{Type: "application", Name: root.Path, Version: root.Version, PURL: PURL(root.Path, root.Version)}
	top.BOMRef = top.PURL
	dep := Dependency{Ref: top.BOMRef, DependsOn: []string{}}
	h := sha256.New()
	fmt.Fprintln(h, top.PURL)
	for _, c := range comps {
		dep.DependsOn = append(dep.DependsOn, c.BOMRef)
		fmt.Fprintln(h, c.PURL)
	}
	if comps == nil {
		comps = []Component{}
	}
	sum := h.Sum(nil)
	sum[6] = sum[6]&0x0f | 0x50 // a name-based UUID (version 5 layout, SHA-256 truncated)
	sum[8] = sum[8]&0x3f | 0x80
	bom := BOM{
		BOMFormat:    "CycloneDX",
		SpecVersion:  "1.5",
		SerialNumber: fmt.Sprintf("urn:uuid:%x-%x-%x-%x-%x", sum[0:4], sum[4:6], sum[6:8], sum[8:10], sum[10:16]),
		Version:      1,
		Metadata: Metadata{
			Tools:     Tools{Components: []Component{{Type: "application", Name: "palisade-sbom"}}},
			Component: top,
		},
		Components:   comps,
		Dependencies: []Dependency{dep},
	}
	if !ts.IsZero() {
		bom.Metadata.Timestamp = ts.UTC().Format(time.RFC3339)
	}
	return bom
}

// sourceDate is $SOURCE_DATE_EPOCH (reproducible builds), or zero.
func sourceDate() time.Time {
	s := os.Getenv("SOURCE_DATE_EPOCH")
	if s == "" {
		return time.Time{}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return time.Time{}
	}
	return time.Unix(n, 0)
}
