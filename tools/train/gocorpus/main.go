// Command gocorpus extracts benign long texts (source code, doc comments,
// Markdown and HTML documentation) from a Go distribution into
// models/data/benign_long.jsonl, the long-text part of the detector's extra
// benign training data. Run once by hand and commit the output; training
// reads the committed file, so the model never depends on the local GOROOT.
//
//	go run ./tools/train/gocorpus -goroot /usr/local/go -out models/data/benign_long.jsonl
//	go run ./tools/train/gocorpus -holdout -out models/data/benign_long_holdout.jsonl
//	go run ./tools/train/gocorpus -llm-docs -out models/data/benign_llm_docs.jsonl
//
// The Go distribution is BSD-3-Clause (https://go.dev/LICENSE). -llm-docs reads the
// documentation of two LLM client modules this repository pins in go.mod (host/llm), from the
// module cache: prose about models, prompts, responses, tools and agents written for
// developers, Apache-2.0.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"go/build"
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

// llmDocs feed -llm-docs: the Markdown documentation of LLM client SDKs go.mod pins, benign
// prose and code about models, messages, prompts, responses and tool use. Without such text
// the model learned that any talk of an LLM's response is a prompt injection (the jailbreaks it
// trains on talk of little else): the MCP conformance server's benign tool output "LLM
// response: This is a test response from the client" was denied (issue 26). Files written for
// AI agents to follow (openai-go's AGENTS.md) are left out: instructions to an agent are what
// the model must keep flagging. Changelogs and generated API references are left out too.
var llmDocs = []struct {
	module, licence string
	files           []string
}{
	{"github.com/openai/openai-go/v3@v3.98.0", "Apache-2.0", []string{"README.md", "MIGRATION.md", "CONTRIBUTING.md"}},
	{"github.com/anthropics/anthropic-sdk-go/v2@v2.15.0", "Apache-2.0", []string{"README.md", "tools.md", "CONTRIBUTING.md"}},
}

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
	llm := flag.Bool("llm-docs", false, "extract the LLM client SDKs' documentation from the module cache instead")
	modcache := flag.String("modcache", filepath.Join(build.Default.GOPATH, "pkg", "mod"), "with -llm-docs: the Go module cache")
	flag.Parse()
	if *llm {
		if err := runLLMDocs(*modcache, *out); err != nil {
			fmt.Fprintln(os.Stderr, "gocorpus:", err)
			os.Exit(1)
		}
		return
	}
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
	if err := write(out, lines); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "gocorpus: %d chunks from %s → %s\n", len(lines), version, out)
	return nil
}

// runLLMDocs writes every chunk of the llmDocs files to out.
func runLLMDocs(modcache, out string) error {
	var lines []line
	for _, m := range llmDocs {
		for _, f := range m.files {
			chunks, err := chunkFile(filepath.Join(modcache, m.module, f))
			if err != nil {
				return err
			}
			for _, c := range chunks {
				lines = append(lines, line{Text: c, Source: m.module + ": " + f, Licence: m.licence})
			}
		}
	}
	if err := write(out, lines); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "gocorpus: %d chunks of LLM SDK documentation → %s\n", len(lines), out)
	return nil
}

// write writes lines as JSONL to out.
func write(out string, lines []line) error {
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
