#!/usr/bin/env bash
# `npm test`: type-check and build, type-check the tests, then run every test. On Linux it runs them
# in a private D-Bus session with a throwaway gnome-keyring, unlocked (scripts/keyring-session.sh),
# so the keychain tests use a real Secret Service and never the user's own keyring. Under CI (CI
# set) that keyring is required: without it the keychain tests would pass without ever talking to a
# Secret Service.
set -euo pipefail
cd "$(dirname "$0")/.."
# Too old a Node (package.json engines.node) fails here in one line, before anything runs on it.
node bin/node-check.js 'npm test' || exit 1
npx tsc -p tsconfig.json
# The tests and the bench: type-checked, not built (vitest and node run them from source).
npx tsc -p tsconfig.test.json

# On Linux the tests run in a private D-Bus session with a throwaway gnome-keyring (required under
# CI, see keyring-session.sh), which sets GATEWAY_TEST_IN_DBUS there.
if [ "$(uname -s)" = Linux ] && [ -z "${GATEWAY_TEST_IN_DBUS:-}" ]; then
  exec bash scripts/keyring-session.sh npx vitest run "$@"
fi
exec npx vitest run "$@"
