#!/usr/bin/env bash
# usage: bash scripts/install-pico.sh   (npm runs it as pretest, before `npm test`)
# SVOX Pico's French lingware, the offline voice the runtime prefers (docs/voice.md#the-offline-voice):
# Debian's libttspico-data, in the non-free section. Run by .ci/run and before `npm test` (the offline
# voice tests need it): installs it when missing and this user can, enabling Debian's non-free component
# in a sources file of its own when apt does not know the package; otherwise says how.
# --help or -h: these lines as its usage, and nothing installed or checked.
set -euo pipefail
case "${1:-}" in --help | -h) sed -n '2,/^set -/{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;; esac
dir=/usr/share/pico/lang
[ -f "$dir/fr-FR_ta.bin" ] && [ -f "$dir/fr-FR_nk0_sg.bin" ] && exit 0
how="enable Debian's non-free component in the apt sources, then 'sudo apt-get install -y libttspico-data' (docs/voice.md#the-offline-voice)"
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
  echo "the offline voice tests need SVOX Pico's French lingware: $how, then npm test again" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
known() { apt-cache policy libttspico-data 2>/dev/null | grep -q 'Candidate: [0-9]'; }
known || apt-get update -qq
if ! known; then
  . /etc/os-release
  if [ "${ID:-}" != debian ] || [ -z "${VERSION_CODENAME:-}" ]; then
    echo "libttspico-data is not in this system's apt sources and this is not Debian: $how" >&2
    exit 1
  fi
  # The mirror the system's Debian source already uses (deb822 or one-line format), else Debian's own.
  mirror="$(grep -rhoE '^(URIs:|deb) +[^ ]+' /etc/apt/sources.list.d/*.sources /etc/apt/sources.list 2>/dev/null | grep -vE 'security|updates' | grep -oE 'https?://[^ ]+/debian/?$' | head -n 1 || true)"
  mirror="${mirror:-http://deb.debian.org/debian}"
  keyring=/usr/share/keyrings/debian-archive-keyring.gpg
  echo "enabling Debian's non-free component for libttspico-data (/etc/apt/sources.list.d/kohami-non-free.sources, $mirror)…"
  {
    echo 'Types: deb'
    echo "URIs: $mirror"
    echo "Suites: $VERSION_CODENAME $VERSION_CODENAME-updates"
    echo 'Components: non-free'
    [ -f "$keyring" ] && echo "Signed-By: $keyring"
  } > /etc/apt/sources.list.d/kohami-non-free.sources
  apt-get update -qq
fi
echo "installing Debian's libttspico-data (SVOX Pico's French lingware, non-free) for the offline voice…"
apt-get install -y -qq libttspico-data >/dev/null
