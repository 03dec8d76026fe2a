# Palisade — the only entry point. `make help` lists targets.
SHELL := /bin/bash
GO ?= go
BUILD := $(CURDIR)/build
export PALISADE_BUILD := $(BUILD)

# Fragments under mk/ add to these lists.
SETUP_TARGETS :=
TEST_TARGETS :=
BENCH_TARGETS :=
EVAL_TARGETS :=
PLUGIN_TARGETS :=

.DEFAULT_GOAL := help

include $(wildcard mk/*.mk)

.PHONY: help
help: ## list targets
	@grep -hE '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | sort | awk -F':.*## ' '{printf "  %-16s %s\n", $$1, $$2}'
