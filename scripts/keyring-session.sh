#!/usr/bin/env bash
# `bash scripts/keyring-session.sh COMMAND [ARG...]`: runs COMMAND in a private D-Bus session whose
# Secret Service is a throwaway gnome-keyring, unlocked, so keychain tests use a real Secret Service
# and never the user's own keyring (scripts/test.sh runs the suite this way; GATEWAY_TEST_IN_DBUS=1
# inside). Under CI (CI set) that keyring is required; elsewhere a missing one is a warning and
# COMMAND runs anyway, without a Secret Service.
#
# The session bus starts the keyring itself, by D-Bus activation, from a service file of ours that
# takes precedence over the system's: the first start, and a restart after gnome-keyring-daemon
# crashed (it sometimes does, mid-suite), both come up unlocked, with the same password and the
# same files, so the login collection holds what earlier tests stored. The system's own service
# file would start a locked one, and every later write would fail with "unlock prompt was
# dismissed".
set -euo pipefail

# No usable Secret Service: a failure under CI, a warning (then COMMAND anyway) elsewhere.
keyring_problem() {
  if [ -n "${CI:-}" ]; then
    echo "npm test: $1: under CI the keychain tests need a real Secret Service (Debian packages: dbus, gnome-keyring)" >&2
    exit 1
  fi
  echo "npm test: warning: $1; the keychain tests run without a Secret Service" >&2
}

missing=()
for tool in dbus-run-session dbus-send gnome-keyring-daemon; do command -v "$tool" >/dev/null || missing+=("$tool"); done
# The machine's standard session bus configuration, which ours includes after its own service dir.
session_conf=
for f in /usr/share/dbus-1/session.conf /etc/dbus-1/session.conf; do [ -f "$f" ] && { session_conf=$f; break; }; done
[ -n "$session_conf" ] || missing+=("session.conf (/usr/share/dbus-1 or /etc/dbus-1)")
if [ ${#missing[@]} -gt 0 ]; then
  keyring_problem "no ${missing[*]} on this machine"
  exec "$@"
fi

# Everything in one throwaway directory (mktemp -d: mode 0700, which gnome-keyring requires of its
# control directory): the keyrings (XDG_DATA_HOME, never the user's), the daemon's control socket
# (never the user's $XDG_RUNTIME_DIR/keyring), the password, the service files and the bus config.
root=$(mktemp -d "${TMPDIR:-/tmp}/gateway-keyring.XXXXXX")
trap 'rm -rf "$root"' EXIT
mkdir -m 700 "$root/data" "$root/control" "$root/services"
printf %s test-keyring >"$root/password"
export XDG_DATA_HOME=$root/data

# In the foreground, so the daemon is the bus's own child and ends with the session; --unlock reads
# the password on stdin, unlocks the login collection, or creates it the first time.
cat >"$root/secret-service" <<EOF
#!/bin/sh
XDG_DATA_HOME='$root/data' exec gnome-keyring-daemon --unlock --foreground --components=secrets \\
  --control-directory='$root/control' <'$root/password' >/dev/null
EOF
chmod 700 "$root/secret-service"
# Both names the daemon takes, so that neither can ever start the system's locked keyring here.
for name in org.freedesktop.secrets org.gnome.keyring; do
  printf '[D-BUS Service]\nName=%s\nExec=%s\n' "$name" "$root/secret-service" >"$root/services/$name.service"
done
# "If a particular service is found in more than one <servicedir>, the first directory listed in the
# configuration file takes precedence" (dbus-daemon(1)): ours comes before the included standard ones.
cat >"$root/session.conf" <<EOF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <servicedir>$root/services</servicedir>
  <include>$session_conf</include>
</busconfig>
EOF

export GATEWAY_TEST_IN_DBUS=1
export -f keyring_problem
dbus-run-session --config-file="$root/session.conf" -- bash -c '
  # Start the keyring now, by activation (the reply comes once the daemon holds its name), and check
  # that its default collection is unlocked: gnome-keyring-daemon does not fail when its unlock does.
  if ! dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus.StartServiceByName \
      string:org.freedesktop.secrets uint32:0 >/dev/null \
    || ! dbus-send --session --print-reply --dest=org.freedesktop.secrets /org/freedesktop/secrets/aliases/default \
      org.freedesktop.DBus.Properties.Get string:org.freedesktop.Secret.Collection string:Locked 2>/dev/null | grep -q "boolean false"; then
    keyring_problem "the throwaway gnome-keyring did not come up unlocked"
  fi
  unset -f keyring_problem
  exec "$@"' keyring-session "$@"
