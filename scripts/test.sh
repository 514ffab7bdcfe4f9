#!/usr/bin/env bash
# `npm test`: type-check and build, type-check the tests, then run every test. On Linux it runs them
# in a private D-Bus session with a throwaway gnome-keyring, unlocked, so the keychain tests use a
# real Secret Service and never the user's own keyring. Under CI (CI set) that keyring is required:
# without it the keychain tests would pass without ever talking to a Secret Service.
set -euo pipefail
cd "$(dirname "$0")/.."
# Too old a Node (package.json engines.node) fails here in one line, before anything runs on it.
node bin/node-check.js 'npm test' || exit 1
npx tsc -p tsconfig.json
# The tests and the bench: type-checked, not built (vitest and node run them from source).
npx tsc -p tsconfig.test.json

# No usable Secret Service: a failure under CI, a warning (then the tests anyway) elsewhere.
keyring_problem() {
  if [ -n "${CI:-}" ]; then
    echo "npm test: $1: under CI the keychain tests need a real Secret Service (Debian packages: dbus, gnome-keyring)" >&2
    exit 1
  fi
  echo "npm test: warning: $1; the keychain tests run without a Secret Service" >&2
}

# Inside the session: whether a Secret Service runs and its default collection is unlocked
# (gnome-keyring-daemon exits 0 whether or not its unlock worked). It returns before its daemon has
# taken its bus name, so the name is waited for (5 s at most), and only then called: calling a name
# nobody has yet would start another daemon by D-Bus activation, one that outlives the session.
secret_service_unlocked() {
  local tries=0
  until dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus.NameHasOwner \
      string:org.freedesktop.secrets 2>/dev/null | grep -q "boolean true"; do
    tries=$((tries + 1))
    [ "$tries" -lt 50 ] || return 1
    sleep 0.1
  done
  dbus-send --session --print-reply --dest=org.freedesktop.secrets /org/freedesktop/secrets/aliases/default \
    org.freedesktop.DBus.Properties.Get string:org.freedesktop.Secret.Collection string:Locked 2>/dev/null | grep -q "boolean false"
}

if [ "$(uname -s)" = Linux ] && [ -z "${GATEWAY_TEST_IN_DBUS:-}" ]; then
  missing=()
  for tool in dbus-run-session dbus-send gnome-keyring-daemon; do command -v "$tool" >/dev/null || missing+=("$tool"); done
  if [ ${#missing[@]} -gt 0 ]; then
    keyring_problem "no ${missing[*]} on this machine"
  else
    export GATEWAY_TEST_IN_DBUS=1
    # gnome-keyring keeps its files under XDG_DATA_HOME: a throwaway one, never the user's keyrings.
    XDG_DATA_HOME=$(mktemp -d)
    export XDG_DATA_HOME
    trap 'rm -rf "$XDG_DATA_HOME"' EXIT
    export -f keyring_problem secret_service_unlocked
    dbus-run-session -- bash -c '
      echo -n test-keyring | gnome-keyring-daemon --unlock --components=secrets >/dev/null 2>&1 || true
      secret_service_unlocked || keyring_problem "the throwaway gnome-keyring did not come up unlocked"
      unset -f keyring_problem secret_service_unlocked
      exec npx vitest run "$@"' vitest "$@"
    exit $?
  fi
fi
exec npx vitest run "$@"
