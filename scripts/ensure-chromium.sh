#!/usr/bin/env bash
# usage: bash scripts/ensure-chromium.sh   (npm runs it as pretest, before `npm test`)
# Debian packages the suite drives: Chromium for the operator console and browser kiosk tests
# (playwright-core never downloads a browser), nginx for the deployment test (test/e2e/deploy.test.ts).
# Runs before `npm test`: installs what is missing when this user can, otherwise says how.
# --help or -h: these lines as its usage, and nothing installed or checked.
set -euo pipefail
case "${1:-}" in --help | -h) sed -n '2,/^set -/{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;; esac
missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)
[ -x /usr/sbin/nginx ] || missing+=(nginx)
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "installing Debian's ${missing[*]} for the test suite (apt-get install -y ${missing[*]})…"
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  exit 0
fi
echo "the test suite needs ${missing[*]}: run 'sudo apt-get install -y ${missing[*]}', then npm test again" >&2
exit 1
