#!/usr/bin/env bash
# Installs the Debian packages numprobe needs to build, test and benchmark. Idempotent: when every
# package is present it does nothing (no apt-get update, no network); it runs `npm ci` in web/
# only when web/node_modules is missing.
set -euo pipefail

packages=(
  build-essential cmake pkg-config
  libfmt-dev libcli11-dev rapidjson-dev libhwy-dev zlib1g-dev libdeflate-dev libxxhash-dev
  libprotobuf-dev protobuf-compiler libyaml-cpp-dev libxlsxwriter-dev libcpp-httplib-dev
  libssl-dev libexpat1-dev libcsv-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libopenmpi-dev openmpi-bin
  pybind11-dev python3-dev python3-numpy python3-pandas python3-torch python3-pytest
  chromium
)
# Node.js builds the web UI (web/); a node already on the machine (e.g. NodeSource's) is kept.
if ! command -v node >/dev/null 2>&1; then
  packages+=(nodejs npm)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    sudo="sudo"
  fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The web UI's npm packages, exactly as web/package-lock.json pins them; once present, builds
# and browser tests run offline. node_modules/.numprobe-lock is the lock they were installed from:
# when the lock changes (a package added), they are installed again.
web="$(cd "$(dirname "$0")/.." && pwd)/web"
if ! cmp -s "$web/package-lock.json" "$web/node_modules/.numprobe-lock"; then
  echo "install-deps: npm ci in $web"
  (cd "$web" && npm ci --no-audit --no-fund && cp package-lock.json node_modules/.numprobe-lock)
fi
