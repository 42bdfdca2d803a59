# tracker — the two commands of the README, and the rest.
#   make demo   set up, import the bundled real Lichess history into SQLite, replay it, then serve
#               the dashboard (open the URL it prints last; PORT=8600 make demo for another port)
#   make test   set up and run the tests (installs Debian's chromium, stockfish and postgresql
#               first, when root and missing, for the browser, engine and PostgreSQL tests; says
#               so before it does)
#   make bench  the performance targets against their yardsticks (ARGS=--quick: 10k games)
#   make install-check  the wheel installed outside the checkout runs tracker demo (as CI does)
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
DEMO_DB ?= demo.db
PORT    ?= 8501

.PHONY: setup demo demo-cli test lint bench clean install-check

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit("tracker needs Python 3.11 or newer") if sys.version_info < (3, 11) else None'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@touch $(STAMP)

# `tracker analyse` needs a UCI engine: Debian's stockfish, installed when root (says so first).
setup: $(STAMP)
	@bash scripts/ensure-stockfish.sh || true

# After Ctrl+C the last lines are commands that work as printed, from this folder.
demo: demo-cli
	@echo "Serving the dashboard on $(DEMO_DB) until Ctrl+C: open the URL below in your browser."
	@trap 'true' INT; $(BIN)/tracker --db $(DEMO_DB) dashboard --port $(PORT); \
	echo; echo "The dashboard stopped. tracker is $(BIN)/tracker, the demo's database $(DEMO_DB):"; \
	echo "  $(BIN)/tracker --db $(DEMO_DB) replay indexinator --perf blitz"; \
	echo "  $(BIN)/tracker --db $(DEMO_DB) strength indexinator --perf blitz"; \
	echo "  $(BIN)/tracker --db $(DEMO_DB) dashboard"

demo-cli: $(STAMP)
	$(BIN)/tracker --db $(DEMO_DB) demo

# make test runs lint first, so CI (.ci/run → make test) fails on a lint, type or flow error too.
test: lint
	@echo "make test: checking for chromium, stockfish and postgresql (browser, engine and PostgreSQL tests)…"
	@bash scripts/ensure-system-packages.sh || true
	$(BIN)/python -m pytest -q

# The dashboard's scripts import each other as top-level modules (Streamlit runs them with
# dashboard/ on sys.path), so mypy checks them that way.
DASHBOARD_MODULES := app charts ui strength_charts strength_ui $(basename $(notdir $(wildcard dashboard/views/*.py)))

# ruff; mypy --strict on tracker/ and on the dashboard (config in pyproject.toml); the one-way
# import flow.
lint: $(STAMP)
	$(BIN)/ruff check tracker dashboard tests benchmarks migrations scripts
	$(BIN)/mypy
	MYPYPATH=dashboard:dashboard/views $(BIN)/mypy $(addprefix -m ,$(DASHBOARD_MODULES))
	$(BIN)/python scripts/check_imports.py

# The wheel as a user installs it (pipx install . / uv tool install .): built, installed in a
# fresh venv outside the checkout, then tracker demo and tracker dashboard run there (~30 s;
# INSTALL_CHECK_FULL=1 installs the dependencies from the index too). CI runs it after the tests.
install-check: $(STAMP)
	PYTHON=$(PYTHON) bash scripts/install-check.sh

bench: $(STAMP)
	$(BIN)/python -m benchmarks $(ARGS)

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache $(DEMO_DB) $(DEMO_DB)-wal $(DEMO_DB)-shm
