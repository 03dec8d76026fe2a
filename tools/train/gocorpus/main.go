// Command gocorpus extracts benign long texts (source code, doc comments,
// Markdown and HTML documentation) from a Go distribution into
// models/data/benign_long.jsonl, the long-text part of the detector's extra
// benign training data. Run once by hand and commit the output; training
// reads the committed file, so the model never depends on the local GOROOT.
//
//	go run ./tools/train/gocorpus -goroot /usr/local/go -out models/data/benign_long.jsonl
//	go run ./tools/train/gocorpus -holdout -out models/data/benign_long_holdout.jsonl
//
// The Go distribution is BSD-3-Clause (https://go.dev/LICENSE).
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// packages whose docs and code are plain benign prose and code. Packages
// whose docs quote attack payloads (html/template's <script> examples,
// os/exec's shell lines, database/sql) are left out on purpose.
var packages = []string{
	"bufio", "bytes", "container/list", "context", "encoding/csv", "encoding/json",
	"errors", "flag", "fmt", "io", "log/slog", "math/big", "sort", "strconv",
	"strings", "sync", "time", "unicode/utf8", "compress/gzip", "hash/crc32",
}

var docs = []string{"README.md", "CONTRIBUTING.md", "doc/go_mem.html", "doc/godebug.md", "doc/go_spec.html"}

// holdout* feed -holdout: other packages and documents, never trained on,
// for the model card's false-positive rate on long benign texts.
var (
	holdoutPackages = []string{
		"archive/zip", "container/heap", "encoding/xml", "go/ast", "image/png",
		"mime/multipart", "net/textproto", "path", "regexp/syntax", "text/tabwriter",
	}
	holdoutDocs = []string{"SECURITY.md", "doc/asm.html"}
)

type line struct {
	Text    string `json:"text"`
	Source  string `json:"source"`
	Licence string `json:"licence"`
}

func main() {
	goroot := flag.String("goroot", "/usr/local/go", "Go distribution to read")
	out := flag.String("out", "models/data/benign_long.jsonl", "output JSONL")
	perFile := flag.Int("per-file", 3, "chunks kept per source file")
	maxDocChunks := flag.Int("per-doc", 40, "chunks kept per documentation file")
	holdout := flag.Bool("holdout", false, "extract the held-out package list instead (for evaluation)")
	flag.Parse()
	if *holdout {
		packages, docs = holdoutPackages, holdoutDocs
	}
	if err := run(*goroot, *out, *perFile, *maxDocChunks); err != nil {
		fmt.Fprintln(os.Stderr, "gocorpus:", err)
		os.Exit(1)
	}
}

func run(goroot, out string, perFile, perDoc int) error {
	ver, err := os.ReadFile(filepath.Join(goroot, "VERSION"))
	if err != nil {
		return err
	}
	version := strings.SplitN(string(ver), "\n", 2)[0]
	var lines []line
	for _, pkg := range packages {
		files, err := filepath.Glob(filepath.Join(goroot, "src", pkg, "*.go"))
		if err != nil {
			return err
		}
		slices.Sort(files)
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			chunks, err := chunkFile(f)
			if err != nil {
				return err
			}
			for _, c := range spread(chunks, perFile) {
				rel, _ := filepath.Rel(goroot, f)
				lines = append(lines, line{Text: c, Source: "go " + version + ": " + rel, Licence: "BSD-3-Clause"})
			}
		}
	}
	for _, d := range docs {
		chunks, err := chunkFile(filepath.Join(goroot, d))
		if err != nil {
			return err
		}
		for _, c := range spread(chunks, perDoc) {
			lines = append(lines, line{Text: c, Source: "go " + version + ": " + d, Licence: "BSD-3-Clause"})
		}
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, l := range lines {
		if err := enc.Encode(l); err != nil {
			return err
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "gocorpus: %d chunks from %s → %s\n", len(lines), version, out)
	return f.Close()
}

// chunkFile splits a file at blank lines into chunks of 300..1500 bytes.
func chunkFile(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	raw, err := io.ReadAll(f)
	if err != nil {
		return nil, err
	}
	var chunks []string
	var cur strings.Builder
	for _, para := range strings.Split(string(raw), "\n\n") {
		if cur.Len()+len(para) > 1500 && cur.Len() >= 300 {
			chunks = append(chunks, strings.TrimSpace(cur.String()))
			cur.Reset()
		}
		if len(para) > 1500 {
			para = para[:1500]
		}
		cur.WriteString(para)
		cur.WriteString("\n\n")
	}
	if cur.Len() >= 300 {
		chunks = append(chunks, strings.TrimSpace(cur.String()))
	}
	return chunks, nil
}

// spread keeps n chunks evenly spaced through the file.
func spread(chunks []string, n int) []string {
	if len(chunks) <= n {
		return chunks
	}
	out := make([]string, 0, n)
	for i := range n {
		out = append(out, chunks[i*len(chunks)/n])
	}
	return out
}
