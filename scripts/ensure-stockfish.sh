#!/usr/bin/env bash
# Installs Debian's Stockfish for `tracker analyse` (and its tests) when it is missing.
# Needs root and Debian's package index; without them the engine's tests are skipped and say why,
# and `tracker analyse` says in one line to run `apt-get install stockfish`.
set -u
command -v stockfish >/dev/null 2>&1 && exit 0
[ -x /usr/games/stockfish ] && exit 0
[ "$(id -u)" = 0 ] || { echo "stockfish missing and not root: the engine's tests will be skipped" >&2; exit 0; }
command -v apt-get >/dev/null 2>&1 || exit 0
echo "stockfish is missing: installing Debian's stockfish with apt-get (as root, once) so that" \
     "tracker analyse and its tests can run. Without it those tests are skipped." >&2
(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq stockfish >/dev/null) \
  || echo "could not install stockfish: the engine's tests will be skipped" >&2
