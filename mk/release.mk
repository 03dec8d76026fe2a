# make release — something to install: binaries, plugins, the signed example bundle, the ONNX
# Runtime library, SBOMs and checksums under build/release/<version>/ (deploy/README.md).
# Not part of `make test`; tools/sbom and deploy/ have their own tests, which are.

RELEASE_DIR := $(BUILD)/release/$(VERSION)
RELEASE_LDFLAGS := -s -w -X github.com/added060/palisade/host/version.stamp=$(VERSION)

SETUP_TARGETS += setup-deploy
TEST_TARGETS += test-deploy

.PHONY: release setup-deploy test-deploy

release: plugins bundle setup-onnxruntime ## build/release/<version>/: linux amd64 (cgo, ORT) and arm64 (no cgo) binaries, plugins, signed bundle, SBOMs, SHA256SUMS
	@[ -n "$(VERSION)" ] || { echo "release: no version (git describe failed); set VERSION=..."; exit 1; }
	rm -rf $(RELEASE_DIR) && mkdir -p $(RELEASE_DIR)/sbom $(RELEASE_DIR)/deploy
	mkdir -p $(RELEASE_DIR)/palisade-$(VERSION)-linux-amd64/bin $(RELEASE_DIR)/palisade-$(VERSION)-linux-amd64/lib
	CGO_ENABLED=1 GOOS=linux GOARCH=amd64 $(GO) build -trimpath -ldflags "$(RELEASE_LDFLAGS)" \
		-o $(RELEASE_DIR)/palisade-$(VERSION)-linux-amd64/bin/palisade ./cmd/palisade
	cp $(ORT_LIB) $(RELEASE_DIR)/palisade-$(VERSION)-linux-amd64/lib/
	mkdir -p $(RELEASE_DIR)/palisade-$(VERSION)-linux-arm64/bin
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 $(GO) build -trimpath -ldflags "$(RELEASE_LDFLAGS)" \
		-o $(RELEASE_DIR)/palisade-$(VERSION)-linux-arm64/bin/palisade ./cmd/palisade
	for a in amd64 arm64; do \
		cp deploy/RELEASE.md $(RELEASE_DIR)/palisade-$(VERSION)-linux-$$a/README.md && \
		$(GO) run ./tools/sbom -bin $(RELEASE_DIR)/palisade-$(VERSION)-linux-$$a/bin/palisade -version $(VERSION) \
			-o $(RELEASE_DIR)/sbom/palisade-$(VERSION)-linux-$$a.cdx.json && \
		tar -czf $(RELEASE_DIR)/palisade-$(VERSION)-linux-$$a.tar.gz -C $(RELEASE_DIR) palisade-$(VERSION)-linux-$$a && \
		rm -rf $(RELEASE_DIR)/palisade-$(VERSION)-linux-$$a || exit 1; \
	done
	mkdir -p $(RELEASE_DIR)/plugins && cp $(GO_PLUGIN_WASM) $(RELEASE_DIR)/plugins/
	tar -czf $(RELEASE_DIR)/palisade-example-bundle-$(VERSION).tar.gz -C $(BUILD)/bundle .
	cp $(BUILD)/keys/dev.key.pub $(RELEASE_DIR)/example-bundle-dev.pub
	cp deploy/palisade.service deploy/grafana-dashboard.json deploy/prometheus-alerts.yaml deploy/README.md $(RELEASE_DIR)/deploy/
	cp deploy/RELEASE.md $(RELEASE_DIR)/README.md
	cd $(RELEASE_DIR) && find . -type f ! -name SHA256SUMS -printf '%P\n' | LC_ALL=C sort | xargs sha256sum > SHA256SUMS
	@echo "release: $(RELEASE_DIR)" && ls -l $(RELEASE_DIR)

setup-deploy: ## systemd-analyze (apt systemd) for the unit check in test-deploy
	@command -v systemd-analyze >/dev/null || { echo "setup-deploy: installing systemd (apt)"; apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends systemd; }

test-deploy: setup-deploy ## deploy/: systemd-analyze verify on the unit, the Dockerfile checker
	$(GO) test -count=1 ./deploy/...
