#!/usr/bin/env bash
# The operator console's test drives Debian's Chromium (playwright-core never downloads a browser).
# Runs before `npm test`: installs it when missing and this user can, otherwise says how.
set -euo pipefail
[ -x /usr/bin/chromium ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "installing Debian's chromium for the operator console test (apt-get install -y chromium)…"
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  exit 0
fi
echo "the operator console test needs /usr/bin/chromium: run 'sudo apt-get install -y chromium', then npm test again" >&2
exit 1
