package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// The benign prompt set (issue 26, det53): texts people send to language models that are not
// attacks — system prompts of assistants and the prompts of a prompting guide. They are the
// hard negatives of prompt-injection detection: they say "you are", "act as", "do not",
// "ignore". Written by `-prompts`. Each corpus is a public repository the registries do not
// serve, vendored under the set's src/ folder, every file pinned by commit with the length
// (in characters) of the stored copy it was read from, and each corpus feeds one split,
// fixed in promptSources before any record met the chain.
//
// A prompt passage is placed twice: as the free text of a chat message the user sends
// (prompt_text, request phase: a Slack post, as the main set places prose) and as the text
// of a page a fetch tool returned (prompt_page, response phase: tool output). A passage
// promptDropRe matches is an attack by a rule written before measuring, left out and listed in
// dropped.jsonl with the reason; a passage the set already holds (same text) is written once.

// promptSource is one prompt corpus, wholly in Split.
type promptSource struct {
	// ID names the corpus in COUNTS.md and begins every source string of its records.
	ID, Split, License string
	files              []vendoredFile // each with its reader (promptReaders) and stored length
}

// promptSources: the assignment was fixed from what each corpus holds (fabric: system prompts
// of an assistant's patterns; the guide: task prompts with their data) before any of its
// passages met the chain. f/awesome-chatgpt-prompts was read and not taken: the LICENSE the
// stored copy holds (commit 2ccaae1a) reserves all rights, against the CC0 its README names.
var promptSources = []promptSource{
	{ID: "danielmiessler/fabric", Split: "calib", License: "MIT", files: promptFiles("fabric", "system",
		"a0c1f0344155a6bb6ddc167d77b93737a8b76355 patterns/create_summary/system.md 958",
		"866278bded5950fd9adcc92732b5f39d444fdeec patterns/create_formal_email/system.md 2709",
		"0c684bd79fe447b8ce2bc0579fa88843c956ea13 patterns/clean_text/system.md 555",
		"053e973b7ce7cc115b0e1d30c96f83c3e1596083 patterns/create_5_sentence_summary/system.md 1083",
		"e035f9f85edf178f6e4fc7af5be9460cb1bc1b41 patterns/create_git_diff_commit/system.md 1200",
		"0c684bd79fe447b8ce2bc0579fa88843c956ea13 patterns/create_tags/system.md 694",
		"5acc01a5aa92044bf09dbbced992be5619231633 patterns/ai/system.md 468",
		"56031bdb53024a9682487c8a2411d59d38e598ba patterns/analyze_logs/system.md 2284",
		"47ee5c47b2601d1b9ff27da11e7e6a525d1a50a5 patterns/coding_master/system.md 1260",
		"ed6f48d209e1d3371f23d5124c3bc257988db380 patterns/analyze_powershell_script/system.md 3221")},
	{ID: "dair-ai/Prompt-Engineering-Guide", Split: "test", License: "MIT", files: promptFiles("dair-ai", "guide",
		"9cf181ce06ad3db4c9d90e13a15c242912dff88f pages/prompts/classification/sentiment-fewshot.en.mdx 2108",
		"12384522366face09589d6a3a0ea04223a221c7c pages/prompts/text-summarization/explain-concept.en.mdx 3104",
		"79d022fed449abed7ce8744e34df30f43808e31b pages/prompts/truthfulness/identify-hallucination.en.mdx 5988",
		"017b90e4c7416d7404249dc5c0955c2f21623cf4 pages/introduction/examples.en.mdx 12982")},
}

// promptLicenseFiles are the corpora's licence files, kept beside their files (checked like
// them): "local commit chars".
var promptLicenseFiles = []string{
	"fabric/LICENSE 4294489c1c9bfc116e8d7dfc72872d8a33e9b681 1084",
	"dair-ai/LICENSE.md 79711ac172eec357895b08f7c270d965ee628988 1064",
}

// promptFiles makes the files of a corpus from rows "commit path chars", each read with read
// and lying at dir/path under src/.
func promptFiles(dir, read string, rows ...string) []vendoredFile {
	var out []vendoredFile
	for _, r := range rows {
		f := strings.Fields(r)
		n, err := strconv.Atoi(f[2])
		if err != nil {
			panic("promptFiles: " + r)
		}
		out = append(out, vendoredFile{Local: dir + "/" + f[1], Commit: f[0], Path: f[1], Read: read, Chars: n})
	}
	return out
}

// promptDropRe marks a passage that is an attack on a model's instructions, not a prompt
// for it (written before any passage met the chain): jailbreak personas, an order to drop
// earlier instructions, a request for the system prompt. DAN only in capitals (the persona, not
// the name).
var promptDropRe = regexp.MustCompile(`\bDAN\b|(?i)\b(jailbreak|do anything now|developer mode)\b|\b(ignore|disregard|forget) (all |any )?(of )?(the |your )?(previous|prior|above|earlier) (instructions|prompts?|rules)|\b(reveal|print|repeat|show) (me )?(your|the) (system prompt|instructions)`)

// promptDropReason is the drop reason of a passage promptDropRe matches.
const promptDropReason = "an attack on the model's instructions (promptDropRe: jailbreak persona, drop earlier instructions, reveal the system prompt)"

// promptRoleRe marks the phrasings a prompt-injection rule looks for; a passage with one is a
// hard negative.
var promptRoleRe = regexp.MustCompile(`(?i)\b(you are|act as|pretend|from now on|ignore|do not|instructions?)\b`)

// promptPassage is one prompt text of a corpus and where it starts.
type promptPassage struct {
	text string
	line int
}

// promptReaders: system, a system prompt in Markdown (each block of lines between blank lines
// outside a code fence, less its heading lines, of 6 words or more); guide, a guide page (each
// fenced block right under a "## Prompt" heading or a "*Prompt:*" line; the model's answers,
// under "*Output:*", and the API examples are not prompts).
var promptReaders = map[string]func(text string) []promptPassage{
	"system": systemPromptPassages,
	"guide":  guidePromptPassages,
}

func systemPromptPassages(text string) []promptPassage {
	var out []promptPassage
	var block []string
	start, fence := 0, false
	flush := func() {
		t := strings.TrimSpace(strings.Join(block, "\n"))
		if len(strings.Fields(t)) >= 6 {
			out = append(out, promptPassage{t, start})
		}
		block = nil
	}
	for i, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fence = !fence
			flush()
			continue
		}
		if fence {
			continue
		}
		if strings.TrimSpace(l) == "" {
			flush()
			continue
		}
		if strings.HasPrefix(l, "#") || strings.HasPrefix(l, "**#") {
			continue
		}
		if block == nil {
			start = i + 1
		}
		block = append(block, strings.TrimRight(l, " \t"))
	}
	flush()
	return out
}

func guidePromptPassages(text string) []promptPassage {
	var out []promptPassage
	lines := strings.Split(text, "\n")
	prev := "" // the last non-blank line outside a fence
	for i := 0; i < len(lines); i++ {
		l := strings.TrimSpace(lines[i])
		if !strings.HasPrefix(l, "```") {
			if l != "" {
				prev = l
			}
			continue
		}
		// A fence: find its end; its body is a prompt if the fence follows a prompt heading.
		end := i + 1
		for end < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[end]), "```") {
			end++
		}
		if prev == "## Prompt" || prev == "*Prompt:*" {
			if t := strings.TrimSpace(strings.Join(lines[i+1:min(end, len(lines))], "\n")); t != "" {
				out = append(out, promptPassage{t, i + 2})
			}
		}
		prev, i = "", end
	}
	return out
}

// readPromptFile reads one vendored file, checks its length against the stored copy's and
// returns its passages.
func readPromptFile(src string, f vendoredFile) ([]promptPassage, error) {
	b, err := readPinned(src, f.Local, f.Commit, f.Chars)
	if err != nil {
		return nil, err
	}
	read, ok := promptReaders[f.Read]
	if !ok {
		return nil, fmt.Errorf("%s: no reader %q", f.Local, f.Read)
	}
	return read(string(b)), nil
}

// promptCorpusRecords reads every corpus under src and returns its records (both placements, the
// fetched page's URL the file's at its commit) and the passages dropped as attacks.
func promptCorpusRecords(src string) ([]Record, []Dropped, error) {
	var recs []Record
	var dropped []Dropped
	seen := map[string]bool{}
	for _, s := range promptSources {
		for _, f := range s.files {
			ps, err := readPromptFile(src, f)
			if err != nil {
				return nil, nil, err
			}
			for _, p := range ps {
				source := fmt.Sprintf("%s@%s/%s:%d", s.ID, f.Commit[:12], f.Path, p.line)
				if promptDropRe.MatchString(p.text) {
					dropped = append(dropped, Dropped{Label: "benign", Reason: promptDropReason, Text: p.text, Source: source})
					continue
				}
				if seen[p.text] {
					continue
				}
				seen[p.text] = true
				url := "https://github.com/" + s.ID + "/blob/" + f.Commit + "/" + f.Path
				recs = append(recs, placePrompt(p.text, source, url, s.ID+"/"+f.Path)...)
			}
		}
	}
	return recs, dropped, nil
}

// placePrompt puts a prompt passage in a chat message the user sends and in a page a fetch
// tool returned.
func placePrompt(text, source, url, group string) []Record {
	hn := promptRoleRe.MatchString(text) || attackWords.MatchString(text)
	msg := Record{Label: "benign", Kind: "prompt_text", HardNegative: hn, Transport: "mcp", Server: "slack", Tool: "post_message",
		Arguments: mustJSON(map[string]any{"channel": "eng", "text": text}), Phase: "request", Text: text, Source: source, Group: group}
	page := Record{Label: "benign", Kind: "prompt_page", HardNegative: hn, Transport: "mcp", Server: "fetch", Tool: "fetch",
		Arguments: mustJSON(map[string]any{"url": url}), Phase: "response",
		Result: text, Text: text, Source: source, Group: group}
	for _, r := range []*Record{&msg, &page} {
		r.ID = fmt.Sprintf("b-%s-%016x", r.Kind, hash64(r.Kind+"\x00"+text))
	}
	return []Record{msg, page}
}

// promptSourceOf is the corpus (promptSources' ID) a record's source names, or "".
func promptSourceOf(source string) string {
	id, _, _ := strings.Cut(source, "@")
	if _, ok := promptCorpus(id); ok {
		return id
	}
	return ""
}

// promptCorpus is the corpus of promptSources with that ID.
func promptCorpus(id string) (promptSource, bool) {
	i := slices.IndexFunc(promptSources, func(s promptSource) bool { return s.ID == id })
	if i < 0 {
		return promptSource{}, false
	}
	return promptSources[i], true
}

// promptSplit puts a record in the split of its corpus (test for a source of no corpus).
func promptSplit(r Record) string {
	if s, ok := promptCorpus(promptSourceOf(r.Source)); ok {
		return s.Split
	}
	return "test"
}

// generatePrompts writes out/{calib,test}.jsonl, out/dropped.jsonl and out/COUNTS.md (with the
// records per corpus and its split) from the corpora vendored under src.
func generatePrompts(out, src string, stdout io.Writer) error {
	if err := checkPromptLicenses(src); err != nil {
		return err
	}
	recs, dropped, err := promptCorpusRecords(src)
	if err != nil {
		return err
	}
	var counts strings.Builder
	head := "# Held-out set, benign prompts split by corpus: counts\n\nWritten by `make heldout-prompts`"
	if err := writeSplits(out, recs, promptSplit, head, dropped, &counts); err != nil {
		return err
	}
	if dropped == nil {
		dropped = []Dropped{}
	}
	if err := writeJSONL(filepath.Join(out, "dropped.jsonl"), dropped); err != nil {
		return err
	}
	var b strings.Builder
	b.WriteString("\n## Records per corpus (each corpus wholly in one split)\n\n| corpus | licence | split | files | records |\n|---|---|---|---:|---:|\n")
	for _, s := range promptSources {
		n := 0
		for _, r := range recs {
			if promptSourceOf(r.Source) == s.ID {
				n++
			}
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %d | %d |\n", s.ID, s.License, s.Split, len(s.files), n)
	}
	text := counts.String() + b.String()
	if err := os.WriteFile(filepath.Join(out, "COUNTS.md"), []byte(text), 0o644); err != nil {
		return err
	}
	fmt.Fprint(stdout, text)
	return nil
}

// checkPromptLicenses checks that each corpus's licence file lies under src with the length of
// the stored copy.
func checkPromptLicenses(src string) error {
	for _, l := range promptLicenseFiles {
		f := strings.Fields(l)
		n, err := strconv.Atoi(f[2])
		if err != nil {
			return fmt.Errorf("promptLicenseFiles: %q", l)
		}
		if _, err := readPinned(src, f[0], f[1], n); err != nil {
			return err
		}
	}
	return nil
}
