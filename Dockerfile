# Palisade gateway image (deploy/README.md). Build from the repository root:
#   docker build -t palisade .
# amd64 builds with cgo and ships ONNX Runtime (local `infer` stages work); other platforms build
# with CGO_ENABLED=0 and have no local inference (use `infer.provider: kserve`).
# Base images are pinned by tag; pin by digest too (@sha256:...) in your own registry mirror.

# ONNX Runtime 1.24.1 from the npm package onnxruntime-node, checked by sha256 (as mk/infer.mk).
FROM node:22.12.0-bookworm-slim AS ort
ARG TARGETARCH
ARG ORT_VERSION=1.24.1
ARG ORT_SHA256=53ef1ac028dd1b05554b8da28d9159eb3876f99868193d2aaa6e67f0243c23d4
WORKDIR /ort
RUN mkdir -p /ort/lib && if [ "${TARGETARCH:-amd64}" = "amd64" ]; then \
      npm pack --silent "onnxruntime-node@${ORT_VERSION}" >/dev/null && \
      tar -xzf "onnxruntime-node-${ORT_VERSION}.tgz" package/bin/napi-v6/linux/x64/libonnxruntime.so.1 && \
      echo "${ORT_SHA256}  package/bin/napi-v6/linux/x64/libonnxruntime.so.1" | sha256sum -c - && \
      mv package/bin/napi-v6/linux/x64/libonnxruntime.so.1 "/ort/lib/libonnxruntime.so.${ORT_VERSION}" && \
      rm -rf package ./*.tgz; \
    fi

FROM golang:1.26.0-bookworm AS build
ARG TARGETARCH
ARG VERSION=dev
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN cgo=0; [ "${TARGETARCH:-amd64}" = "amd64" ] && cgo=1; \
    CGO_ENABLED=$cgo go build -buildvcs=false -trimpath \
      -ldflags "-s -w -X github.com/added060/palisade/host/version.stamp=${VERSION}" \
      -o /out/bin/palisade ./cmd/palisade

FROM debian:12.8-slim
# curl for the HEALTHCHECK, ca-certificates for HTTPS upstreams and LLM providers.
RUN apt-get update && \
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ca-certificates curl && \
    rm -rf /var/lib/apt/lists/* && \
    groupadd --system palisade && \
    useradd --system --gid palisade --home-dir /var/lib/palisade --shell /usr/sbin/nologin palisade && \
    mkdir -p /var/lib/palisade /etc/palisade && chown palisade:palisade /var/lib/palisade && chmod 0700 /var/lib/palisade
# bin/palisade finds ../lib/libonnxruntime.so.1.24.1 beside itself (host/infer FindLibrary).
COPY --from=build /out/bin/palisade /opt/palisade/bin/palisade
COPY --from=ort /ort/lib/ /opt/palisade/lib/
ENV PATH=/opt/palisade/bin:$PATH \
    PALISADE_LISTEN=0.0.0.0:8420 \
    PALISADE_DATA_DIR=/var/lib/palisade \
    XDG_RUNTIME_DIR=/var/lib/palisade/run
VOLUME ["/var/lib/palisade"]
EXPOSE 8420
USER palisade
WORKDIR /var/lib/palisade
HEALTHCHECK --interval=15s --timeout=3s --start-period=30s --retries=3 \
  CMD ["curl", "-fsS", "-o", "/dev/null", "http://127.0.0.1:8420/healthz"]
ENTRYPOINT ["palisade"]
CMD ["serve", "--config", "/etc/palisade/palisade.yaml"]
