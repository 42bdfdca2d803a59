#!/usr/bin/env bash
# Installs the Debian packages the tests use, when they are missing: chromium (the dashboard's
# browser tests), stockfish (local move analysis) and postgresql (the PostgreSQL tests run a
# throwaway server). Needs root and Debian's package index; without them the tests that need a
# package are skipped and say why. Says what it installs before it does.
set -u
missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
{ command -v stockfish >/dev/null 2>&1 || [ -x /usr/games/stockfish ]; } || missing+=(stockfish)
compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || missing+=(postgresql)
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "missing ${missing[*]} and not root with apt-get: the tests that need them will be skipped" >&2
  exit 0
fi
echo "installing Debian's ${missing[*]} with apt-get (as root, once; a minute or two) for the" \
     "browser, engine and PostgreSQL tests. Without them those tests are skipped." >&2
(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null) \
  || echo "could not install ${missing[*]}: the tests that need them will be skipped" >&2
