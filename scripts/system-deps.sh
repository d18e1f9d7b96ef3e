#!/usr/bin/env bash
# Installs the Debian packages egomem needs, idempotently. Runs as root (as on this
# machine kind and in CI); elsewhere it only reports what is missing.
set -euo pipefail
# Debian packages `make test` needs: chromium for the web inspector's browser test
# (driven by Playwright's Python package; no browser download); cmake and g++ to build
# llama-cpp-python's wheel once (it has no binary wheel for this platform); offline TTS
# voices (Festival kal/ked/slt, espeak-ng) for the users of `egomem bench conversation`'s
# recordings and of scripts/make_demo_assets.py.
need=(chromium cmake g++ festival festvox-kallpc16k festvox-kdlpc16k festvox-us-slt-hts espeak-ng)
missing=()
for p in "${need[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -eq 0 ]; then exit 0; fi
if [ "$(id -u)" -ne 0 ]; then
  echo "system-deps: missing Debian packages: ${missing[*]} (install them as root)" >&2
  exit 1
fi
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
