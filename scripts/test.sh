#!/usr/bin/env bash
# `npm test`: type-check and build, type-check the tests, then run every test. On Linux it runs them in a private D-Bus
# session with a throwaway gnome-keyring, unlocked, so the keychain tests use a real Secret Service
# and never the user's own keyring.
set -euo pipefail
cd "$(dirname "$0")/.."
# Too old a Node (package.json engines.node) fails here in one line, before anything runs on it.
node bin/node-check.js 'npm test' || exit 1
npx tsc -p tsconfig.json
# The tests and the bench: type-checked, not built (vitest and node run them from source).
npx tsc -p tsconfig.test.json
if [ "$(uname -s)" = Linux ] && [ -z "${GATEWAY_TEST_IN_DBUS:-}" ] \
   && command -v dbus-run-session >/dev/null && command -v gnome-keyring-daemon >/dev/null; then
  export GATEWAY_TEST_IN_DBUS=1
  # gnome-keyring keeps its files under XDG_DATA_HOME: a throwaway one, never the user's keyrings.
  XDG_DATA_HOME=$(mktemp -d)
  export XDG_DATA_HOME
  trap 'rm -rf "$XDG_DATA_HOME"' EXIT
  dbus-run-session -- bash -c 'echo -n test-keyring | gnome-keyring-daemon --unlock --components=secrets >/dev/null 2>&1; exec npx vitest run "$@"' vitest "$@"
  exit $?
fi
exec npx vitest run "$@"
