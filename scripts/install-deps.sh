#!/usr/bin/env bash
# Installs the Debian packages numprobe needs to build, test and benchmark. Idempotent: when every
# package is present it does nothing (no apt-get update, no network).
set -euo pipefail

packages=(
  build-essential cmake pkg-config
  libfmt-dev libcli11-dev rapidjson-dev libhwy-dev zlib1g-dev
  libprotobuf-dev protobuf-compiler libyaml-cpp-dev libxlsxwriter-dev libcpp-httplib-dev
  libssl-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  pybind11-dev python3-dev python3-numpy python3-torch python3-pytest
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
