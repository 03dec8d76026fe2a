# Held-out set (data/heldout, tools/heldout): real benign tool calls and public attack lists
# placed in the tool fields where they are attacks. Scored by tools/eval -heldout: the rules and
# the ONNX detector on the text, and the whole served chain (build/bundle) on the tool call.
HELDOUT_DIR := data/heldout
HELDOUT_BASELINE := $(HELDOUT_DIR)/baseline.json

.PHONY: heldout

heldout: ## regenerate data/heldout/{calib,test}.jsonl from pinned Go modules and npm packages (go mod download, npm pack)
	$(GO) run ./tools/heldout -out $(HELDOUT_DIR) -cache $(BUILD)/heldout-src
