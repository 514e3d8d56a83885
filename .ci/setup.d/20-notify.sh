#!/usr/bin/env bash
# The notifier's real-delivery test: a private D-Bus session bus (dbus-daemon), a real
# notification server (dunst) and the X server it needs (Xvfb, headless).
set -euo pipefail
need=()
command -v dbus-daemon >/dev/null 2>&1 || need+=(dbus-daemon)
command -v dunst >/dev/null 2>&1 || need+=(dunst)
command -v Xvfb >/dev/null 2>&1 || need+=(xvfb)
if [ "${#need[@]}" -eq 0 ]; then
    exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${need[@]}"
