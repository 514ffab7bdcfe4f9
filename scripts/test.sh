#!/usr/bin/env bash
# `npm test`: type-check and build, then run every test. On Linux without a desktop session it
# starts a private D-Bus session with gnome-keyring unlocked, so the keychain tests use the real
# Secret Service (never the user's own keyring, which lives on the user's session bus).
set -euo pipefail
cd "$(dirname "$0")/.."
npx tsc -p tsconfig.json
if [ "$(uname -s)" = Linux ] && [ -z "${GATEWAY_TEST_IN_DBUS:-}" ] \
   && command -v dbus-run-session >/dev/null && command -v gnome-keyring-daemon >/dev/null; then
  export GATEWAY_TEST_IN_DBUS=1
  exec dbus-run-session -- bash -c 'echo -n test-keyring | gnome-keyring-daemon --unlock --components=secrets >/dev/null 2>&1; exec npx vitest run "$@"' vitest "$@"
fi
exec npx vitest run "$@"
