"""The import-flow check (scripts/check_imports.py): the project passes it, and it catches what
it is for on a small made-up tree: a folder imports only the folders below it."""

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


def test_only_three_modules_sit_at_the_top_of_tracker() -> None:
    top = sorted(p.name for p in (ROOT / "tracker").glob("*.py"))
    assert set(top) <= {"__init__.py", "__main__.py", "_version.py"}, top


def test_the_floor_of_a_module_is_its_folder() -> None:
    floor, floors = check_imports.floor_of, check_imports.FLOORS
    assert floor("tracker.core.records") == 0
    assert floor("tracker.fide.rules") == 1
    assert floor("tracker.sources.pgn") < floor("tracker.store.db") < floor("tracker.importing")
    assert floor("tracker.report.selection") < floor("tracker.api.groups")
    assert floor("tracker.cli.commands") == floor("dashboard.views.games") == len(floors) - 1
    assert floor("tracker._version") == -1
    assert floor("tracker") == floor("tracker.__main__") == len(floors)
    assert floor("tracker.nowhere") is None
    assert floor("tracker.reporting") is None  # a folder's name is not a prefix of another


def test_a_clean_tree_passes(tmp_path: Path) -> None:
    root = _tree(tmp_path, {
        "tracker/core/__init__.py": "",
        "tracker/_version.py": "",
        "tracker/core/records.py": "from tracker import _version\n",
        "tracker/core/errors.py": "",
        "tracker/sources/__init__.py": "",
        "tracker/sources/pgn.py": "from tracker.core.records import x\nfrom . import other\n",
        "tracker/sources/other.py": "from tracker.core import errors\n",
        "tracker/fide/__init__.py": "from tracker.core.errors import E\n",
        "tracker/api/__init__.py": "from tracker.sources import pgn\nimport tracker.fide\n",
        "tracker/cli/commands.py": "from tracker import api\nfrom tracker.api import E\n",
        "dashboard/app.py": "import tracker\nfrom tracker.api import replay\n",
    })
    assert check_imports.check(root) == []


def test_a_folder_above_and_the_views_below_the_api(tmp_path: Path) -> None:
    root = _tree(tmp_path, {
        "tracker/core/records.py": "",
        "tracker/store/__init__.py": "",
        "tracker/store/db.py": '"""tracker.api names no import in a docstring."""\n'
                               '_LAZY = {"x": "tracker.api:x", "y": "nothing.of.ours"}\n',
        "tracker/sources/__init__.py": "",
        "tracker/sources/lichess.py": "def f():\n    from tracker.store.db import Store\n",
        "tracker/fide/__init__.py": "import importlib\nimportlib.import_module('tracker.api')\n",
        "tracker/api/__init__.py": "",
        "tracker/cli/commands.py": "from tracker.core.records import GameRecord\n",
        "dashboard/ui.py": "from tracker.store import db\n",
    })
    assert check_imports.check(root) == [
        "dashboard/ui.py:1: dashboard.ui imports tracker.store.db: the views import only "
        "tracker.api",
        "tracker/cli/commands.py:1: tracker.cli.commands imports tracker.core.records: the views "
        "import only tracker.api",
        "tracker/fide/__init__.py:2: tracker.fide imports tracker.api: tracker.api is above "
        "tracker.fide",
        "tracker/sources/lichess.py:2: tracker.sources.lichess imports tracker.store.db: "
        "tracker.store is above tracker.sources",
        "tracker/store/db.py:2: tracker.store.db imports tracker.api: tracker.api is above "
        "tracker.store",
    ]


def test_views_do_not_import_the_libraries_below_the_api(tmp_path: Path) -> None:
    root = _tree(tmp_path, {
        "tracker/api/__init__.py": "",
        "tracker/cli/commands.py": "import typer\nfrom rich.table import Table\n",
        "dashboard/app.py": "from sqlalchemy.exc import OperationalError\nimport streamlit\n",
        "dashboard/views/page.py": "def f():\n    import berserk\n",
    })
    assert check_imports.check(root) == [
        "dashboard/app.py:1: dashboard.app (a view) imports sqlalchemy.exc: the views reach it "
        "only through tracker.api",
        "dashboard/views/page.py:2: dashboard.views.page (a view) imports berserk: the views "
        "reach it only through tracker.api",
    ]


def test_no_private_module_of_a_dependency(tmp_path: Path) -> None:
    root = _tree(tmp_path, {
        "tracker/cli/commands.py": "def f():\n    from typer._coercion import RuntimeParam\n",
        "tracker/core/x.py": "from click import _compat\nfrom tracker.core import _mine\n",
        "tracker/core/_mine.py": "import os\nos.__file__\n",
    })
    assert check_imports.check(root) == [
        "tracker/cli/commands.py:2: tracker.cli.commands imports typer._coercion: a private "
        "module or name of a dependency",
        "tracker/cli/commands.py:2: tracker.cli.commands imports typer._coercion.RuntimeParam: "
        "a private module or name of a dependency",
        "tracker/core/x.py:1: tracker.core.x imports click._compat: a private module or name of "
        "a dependency",
    ]


def test_cycle_and_a_module_in_no_folder(tmp_path: Path) -> None:
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
        # a dynamic import with a literal name counts like any other
        "tracker/api/__init__.py": "def f():\n    import importlib\n"
                                   "    importlib.import_module('tracker.api.x')\n",
        "tracker/api/x.py": "from tracker.api import y\n",
    })
    assert check_imports.check(root) == [
        "tracker/misc.py: tracker.misc is in no folder of FLOORS: put it in a folder (or add "
        "the folder to FLOORS in scripts/check_imports.py)",
        "import cycle: tracker.api ↔ tracker.api.x",
        "import cycle: tracker.sources.a ↔ tracker.sources.b",
    ]


def test_exit_status_is_1_with_one_line_per_problem(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"tracker/core/records.py": "import tracker.cli.commands\n",
                            "tracker/cli/commands.py": ""})
    args = [sys.executable, str(SCRIPT), str(root)]
    done = subprocess.run(args, capture_output=True, text=True, check=False)
    assert done.returncode == 1
    assert done.stdout.splitlines() == [
        "tracker/core/records.py:1: tracker.core.records imports tracker.cli.commands: tracker.cli "
        "is above tracker.core"]
