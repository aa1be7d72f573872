#!/usr/bin/env bash
# Installs pgloader (Debian package) for bench/replica-load.bench.ts when it is missing.
# Idempotent: does nothing when pgloader is already on the PATH. Needs root (or sudo) for apt-get.
set -euo pipefail

if command -v pgloader >/dev/null 2>&1; then
  echo "pgloader already installed: $(pgloader --version 2>/dev/null | head -n 1)"
  exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
  SUDO=""
elif command -v sudo >/dev/null 2>&1; then
  SUDO="sudo"
else
  echo "pgloader is missing and installing it needs root (apt-get); run this script as root" >&2
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update
$SUDO apt-get install -y --no-install-recommends pgloader
echo "pgloader installed: $(pgloader --version 2>/dev/null | head -n 1)"
