#!/bin/sh
# Drops what a production node_modules carries but never loads on this platform: onnxruntime-node's native
# libraries for other systems (≈ 245 MB of its ≈ 290 MB) and better-sqlite3's sources (built already).
# Run in the folder holding node_modules; the Dockerfile and test/deploy/production-install.test.ts both use it.
set -eu
arch="$(node -p process.arch)"
ort=node_modules/onnxruntime-node/bin/napi-v6
find "$ort" -mindepth 2 -maxdepth 2 ! -path "*/linux/${arch}" -exec rm -rf {} +
find "$ort" -mindepth 1 -maxdepth 1 ! -name linux -exec rm -rf {} +
rm -rf node_modules/better-sqlite3/deps node_modules/better-sqlite3/src
test -f "$ort/linux/${arch}/onnxruntime_binding.node"
