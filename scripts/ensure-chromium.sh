#!/usr/bin/env bash
# Installs Debian's headless Chromium for the dashboard's browser test when it is missing.
# Needs root and Debian's package index; without them the browser test is skipped and says why.
set -u
command -v chromium >/dev/null 2>&1 && exit 0
[ "$(id -u)" = 0 ] || { echo "chromium missing and not root: the browser test will be skipped" >&2; exit 0; }
command -v apt-get >/dev/null 2>&1 || exit 0
echo "chromium is missing: installing Debian's chromium with apt-get (as root, once; about a" \
     "minute) so the dashboard's browser test can run. Without it that test is skipped." >&2
(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
  || echo "could not install chromium: the browser test will be skipped" >&2
