# syntax=docker/dockerfile:1
# Herd's container image: `docker build -t herd .` (Node only) or `docker build --target python -t herd:python .`
# (adds Debian's python3 + numpy for Python-backend models). Layout, sizes and verification: docs/deploy.md.

# node:20-bookworm-slim, pinned by digest (where the digest came from: docs/deploy.md#image). Bump it deliberately.
ARG NODE_IMAGE=node:20-bookworm-slim@sha256:2cf067cfed83d5ea958367df9f966191a942351a2df77d6f0193e162b5febfc0

# ---- build: every dependency, then tsc into dist/ ----
FROM ${NODE_IMAGE} AS build
# better-sqlite3 builds from source when no prebuilt binary matches: the toolchain lives in this stage only.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ ca-certificates \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
# onnxruntime-node's postinstall would download CUDA libraries Herd never loads (docs/decisions/npm-install.md).
ENV ONNXRUNTIME_NODE_INSTALL=skip
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/copy-build-assets.mjs scripts/build-ui.mjs scripts/
COPY src src
# The console (/ui): bundled into dist/ui by scripts/build-ui.mjs; nothing of ui/ ships but that bundle.
COPY ui ui
RUN npm run build

# ---- prod-deps: runtime dependencies only, built against the same base as the runtime ----
FROM build AS prod-deps
WORKDIR /prod
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
# Keep only this platform's native libraries (onnxruntime-node ships every platform's, ≈ 290 MB).
COPY deploy/docker/prune-node-modules.sh /usr/local/bin/
RUN sh /usr/local/bin/prune-node-modules.sh

# ---- runtime: node, the compiled tree and production node_modules; nothing else ----
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    ONNXRUNTIME_NODE_INSTALL=skip
WORKDIR /app
COPY --from=prod-deps /prod/node_modules ./node_modules
COPY --from=build /src/dist ./dist
COPY package.json ./
# `herd` and `tritonserver` on PATH: the node image's entrypoint runs a command it finds there, so KServe's Triton
# runtime args (`tritonserver --model-store=… --http-port=…`) start `herd serve` with the image swapped.
COPY --chmod=0555 deploy/docker/herd deploy/docker/tritonserver /usr/local/bin/
# Writable places on a read-only root filesystem: /data (keys, SQLite ledger, spool) and /tmp. The model
# repository (/models) and the configuration (/etc/herd/herd.yaml) are mounted read-only.
RUN mkdir -p /data /models /etc/herd && chown 1000:1000 /data
VOLUME ["/data"]
# Numeric ids so Kubernetes' runAsNonRoot can verify them; uid 1000 is the base image's `node` user.
USER 1000:1000
# Relative paths in a config-less start (e.g. data/herd.db) land in the writable volume.
WORKDIR /data
EXPOSE 8000 8001 8002
# No curl in the slim image: node asks readiness itself.
HEALTHCHECK --interval=10s --timeout=3s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.HERD_HTTP_PORT||8000)+'/v2/health/ready').then(r=>process.exit(r.status===200?0:1),()=>process.exit(1))"]
CMD ["herd", "serve", "--config", "/etc/herd/herd.yaml"]

# ---- python: the runtime plus Debian's python3 and numpy, for models with backend: "python" ----
FROM runtime AS python
USER 0:0
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 python3-numpy \
 && rm -rf /var/lib/apt/lists/*
# The root filesystem may be read-only: no .pyc next to the backend's stub.
ENV PYTHONDONTWRITEBYTECODE=1
USER 1000:1000

# The default target (a plain `docker build`) is the Node-only runtime.
FROM runtime AS default
