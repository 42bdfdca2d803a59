#!/usr/bin/env bash
# tracker as a user installs it (pipx install . / uv tool install .): the wheel is built,
# installed in a fresh virtual environment outside the checkout, and `tracker demo` and
# `tracker dashboard` run there, from another folder, with a home of their own.
#
#   bash scripts/install-check.sh          # fast: the dependencies are .venv's (make setup)
#   INSTALL_CHECK_FULL=1 bash scripts/install-check.sh   # the dependencies from the index too
#
# Fast mode borrows .venv's installed dependencies (its site-packages on the path, after the
# fresh venv's own, with none of its .pth hooks, so .venv's editable tracker stays out): what
# is checked is the wheel itself (the package, its data, the dashboard, the migrations, the
# entry point). It checks that the tracker imported is the wheel's, not the checkout's.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
PY=${PYTHON:-python3}
VENV_PY="$ROOT/.venv/bin/python"
[ -x "$VENV_PY" ] || { echo "install-check: run make setup first" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/tracker-install-check.XXXXXX")
server=""
cleanup() {
  if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

echo "install-check: building the wheel…"
if ! "$VENV_PY" -m pip wheel --quiet --no-deps --wheel-dir "$work/dist" "$ROOT" \
    > "$work/wheel.log" 2>&1; then
  cat "$work/wheel.log"; echo "install-check: the wheel did not build" >&2; exit 1
fi
wheel=$(ls "$work"/dist/lichess_fide_tracker-*.whl)

"$PY" -m venv "$work/venv"
if [ "${INSTALL_CHECK_FULL:-0}" = 1 ]; then
  "$work/venv/bin/python" -m pip install --quiet "$wheel"
else
  site=$("$work/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  "$VENV_PY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])' > "$site/zz-borrowed-deps.pth"
  "$work/venv/bin/python" -m pip install --quiet --no-deps "$wheel"
fi

mkdir -p "$work/elsewhere" "$work/home"
cd "$work/elsewhere"   # outside the checkout: nothing of it on the path
export HOME="$work/home" XDG_DATA_HOME="$work/home/.local/share"
unset TRACKER_DB TRACKER_READ_ONLY PYTHONPATH
tracker="$work/venv/bin/tracker"

where=$("$work/venv/bin/python" -c 'import tracker, os; print(os.path.dirname(tracker.__file__))')
case "$where" in
  "$work/venv/"*) ;;
  *) echo "install-check: tracker imported from $where, not from the wheel" >&2; exit 1 ;;
esac

echo "install-check: tracker demo, from $work/elsewhere…"
"$tracker" --version
"$tracker" demo --no-dashboard > demo.out
grep -Eq "^Now: FIDE-style [0-9]{4} " demo.out || { cat demo.out; echo "install-check: tracker demo gave no answer" >&2; exit 1; }
test -s "$XDG_DATA_HOME/tracker/tracker.db" || { echo "install-check: no database in the user data folder" >&2; exit 1; }

echo "install-check: tracker dashboard…"
port=$("$work/venv/bin/python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$tracker" dashboard --port "$port" > dashboard.log 2>&1 &
server=$!
for _ in $(seq 1 120); do
  if "$work/venv/bin/python" -c "import urllib.request, sys; sys.exit(urllib.request.urlopen('http://127.0.0.1:$port/_stcore/health', timeout=2).read() != b'ok')" 2>/dev/null; then
    echo "install-check: ok — the wheel installs, and tracker demo and tracker dashboard run outside the checkout"
    exit 0
  fi
  kill -0 "$server" 2>/dev/null || break
  sleep 0.5
done
cat dashboard.log
echo "install-check: tracker dashboard did not answer" >&2
exit 1
