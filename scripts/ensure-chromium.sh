#!/usr/bin/env bash
# Debian packages the suite drives: Chromium for the operator console and browser kiosk tests
# (playwright-core never downloads a browser), nginx for the deployment test (test/e2e/deploy.test.ts).
# Runs before `npm test`: installs what is missing when this user can, otherwise says how.
set -euo pipefail
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
