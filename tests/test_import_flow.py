"""The import-flow check (scripts/check_imports.py): the project passes it, and it catches what
it is for on a small made-up tree."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "check_imports.py"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("check_imports", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while building
    spec.loader.exec_module(module)
    return module


check_imports = _load()


def _tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    for package in ("tracker", "dashboard"):
        (root / package).mkdir(exist_ok=True)
        (root / package / "__init__.py").touch()
    return root


def test_the_project_follows_the_flow() -> None:
    done = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True,
                          check=False)
    assert done.stdout.strip().startswith("import flow: OK"), done.stdout + done.stderr
    assert done.returncode == 0


def test_layers_of_the_project_modules() -> None:
    layer = check_imports.layer_of
    assert layer("tracker.records") == "base"
    assert layer("tracker.errors") == "errors"
    assert layer("tracker.sources.pgn") == "sources"
    assert layer("tracker.store.db") == "store"
    assert layer("tracker.importing") == "importing"
    assert layer("tracker.selection") == "selection"
    assert layer("tracker.fide.rules") == "engine"
    assert layer("tracker.replaying") == "report"
    assert layer("tracker.report_json") == "report"
    assert layer("tracker") == "api"
    assert layer("tracker.cli") == "views"
    assert layer("dashboard.views.games") == "views"
    assert layer("tracker.nowhere") is None


def test_a_clean_tree_passes(tmp_path: Path) -> None:
    root = _tree(tmp_path, {
        "tracker/records.py": "",
        "tracker/errors.py": "",
        "tracker/sources/__init__.py": "",
        "tracker/sources/pgn.py": "from tracker.records import x\nfrom . import other\n",
        "tracker/sources/other.py": "from tracker import errors\n",
        "tracker/fide/__init__.py": "from tracker.errors import E\n",
        "tracker/api.py": "from tracker.sources import pgn\nimport tracker.fide\n",
        "tracker/cli.py": "from tracker import api\nfrom tracker.errors import E\n",
        "dashboard/app.py": "import tracker\nfrom tracker.api import replay\n",
    })
    assert check_imports.check(root, frozenset()) == []


def test_later_layer_views_below_api_and_engine_purity(tmp_path: Path) -> None:
    root = _tree(tmp_path, {
        "tracker/records.py": "",
        "tracker/store/__init__.py": "",
        "tracker/store/db.py": "",
        "tracker/sources/__init__.py": "",
        "tracker/sources/lichess.py": "def f():\n    from tracker.store.db import Store\n",
        "tracker/fide/__init__.py": "from tracker.records import GameRecord\n",
        "tracker/api.py": "",
        "dashboard/ui.py": "from tracker.store import db\n",
    })
    assert check_imports.check(root, frozenset()) == [
        "dashboard/ui.py:1: dashboard.ui (views) imports tracker.store.db (store): "
        "the views import only tracker.api (and tracker.errors)",
        "tracker/fide/__init__.py:1: tracker.fide (engine) imports tracker.records (base): "
        "the engine layer may not import the base layer",
        "tracker/sources/lichess.py:2: tracker.sources.lichess (sources) imports "
        "tracker.store.db (store): a later layer",
    ]


def test_views_do_not_import_the_libraries_below_the_api(tmp_path: Path) -> None:
    root = _tree(tmp_path, {
        "tracker/api.py": "",
        "tracker/cli.py": "import typer\nfrom rich.table import Table\n",
        "dashboard/app.py": "from sqlalchemy.exc import OperationalError\nimport streamlit\n",
        "dashboard/views/page.py": "def f():\n    import berserk\n",
    })
    assert check_imports.check(root, frozenset()) == [
        "dashboard/app.py:1: dashboard.app (views) imports sqlalchemy.exc: the views reach it "
        "only through tracker.api",
        "dashboard/views/page.py:2: dashboard.views.page (views) imports berserk: the views "
        "reach it only through tracker.api",
    ]


def test_cycle_within_a_layer_and_unclaimed_module(tmp_path: Path) -> None:
    root = _tree(tmp_path, {
        "tracker/sources/__init__.py": "",
        "tracker/sources/a.py": "from tracker.sources import b\n",
        "tracker/sources/b.py": "import tracker.sources.a\n",
        "tracker/misc.py": "",
        # an import for annotations only makes no cycle
        "tracker/store/__init__.py": "",
        "tracker/store/c.py": "import typing\nif typing.TYPE_CHECKING:\n"
                              "    from tracker.store.d import D\n",
        "tracker/store/d.py": "from tracker.store import c\n",
    })
    assert check_imports.check(root, frozenset()) == [
        "tracker/misc.py: tracker.misc belongs to no layer: "
        "add it to LAYERS in scripts/check_imports.py",
        "import cycle: tracker.sources.a ↔ tracker.sources.b",
    ]


def test_known_violations_are_allowed_and_may_only_shrink(tmp_path: Path) -> None:
    root = _tree(tmp_path, {
        "tracker/config.py": "from tracker import __version__\n",
        "tracker/records.py": "",
    })
    known = frozenset({("tracker.config", "tracker"), ("tracker.records", "tracker.api")})
    assert check_imports.check(root, known) == [
        "KNOWN_VIOLATIONS: tracker.records no longer imports tracker.api against the flow: "
        "delete the entry",
    ]
    problems = check_imports.check(root, frozenset())
    assert problems == ["tracker/config.py:1: tracker.config (base) imports tracker (api): "
                        "a later layer"]


def test_exit_status_is_1_with_one_line_per_problem(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"tracker/records.py": "import tracker.cli\n", "tracker/cli.py": ""})
    args = [sys.executable, str(SCRIPT), str(root)]
    done = subprocess.run(args, capture_output=True, text=True, check=False)
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert len(lines) == 1 + len(check_imports.KNOWN_VIOLATIONS)  # the project's entries: stale
    assert lines[0] == ("tracker/records.py:1: tracker.records (base) imports tracker.cli "
                        "(views): a later layer")


def test_a_known_cycle_is_allowed_while_it_lasts(tmp_path: Path) -> None:
    files = {
        "tracker/store/__init__.py": "",
        "tracker/store/models.py": "from tracker.store import fide\n",
        "tracker/store/fide.py": "from tracker.store.models import Base\n",
    }
    known = frozenset({("tracker.store.models", "tracker.store.fide")})
    assert check_imports.check(_tree(tmp_path, files), known) == []
    (tmp_path / "tracker/store/fide.py").write_text("")
    assert check_imports.check(tmp_path, known) == [
        "KNOWN_VIOLATIONS: tracker.store.models no longer imports tracker.store.fide against "
        "the flow: delete the entry",
    ]
