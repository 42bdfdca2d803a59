"""The project's import flow, checked: python scripts/check_imports.py [ROOT]

Data flows one way: sources → records → store → selection → engine → report → api → views.
The folders are the layers: :data:`FLOORS` lists them bottom first, and that order is the only
table. A module of ``tracker/<folder>/`` belongs to that folder's floor, ``dashboard/`` to the
views' floor (beside ``tracker/cli``); of the three files at the top of ``tracker/``,
``_version.py`` is the bottom (it imports nothing) and the package itself and ``__main__.py``
the top (they hand over to the API and the CLI). Reported, one line each, exit status 1:

- a module importing a folder above its own (every import counts: at the top of the file,
  inside a function, under ``TYPE_CHECKING``; and a string that is a project module's name,
  ``"tracker.x"`` or ``"tracker.x:attribute"``, outside a docstring: what
  ``importlib.import_module`` or a lazy re-export loads, so a dynamic import is declared by
  its literal name and checked like any other);
- a view (the top floor: ``tracker/cli``, ``dashboard/``) importing anything of tracker but
  the floor right under it, :mod:`tracker.api`;
- a view importing a library below the API (:data:`VIEW_FORBIDDEN_LIBRARIES`);
- any module importing a private module or name of a dependency (``typer._coercion``,
  ``from x import _y``): a release of the dependency may change it without notice;
- an import cycle (an import under ``if TYPE_CHECKING:`` runs nothing, so it makes none);
- a module in no folder of :data:`FLOORS` (a new folder goes into the table; a new module
  goes into a folder, never at the top of ``tracker/``).

Standard library only (:mod:`ast`); nothing is imported or run.
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from pathlib import Path

#: The floors, bottom first: a module imports its own floor and the floors listed before it,
#: never one after. ``core`` holds the records, errors, config (the environment read once) and
#: the small vocabularies everything shares; ``fide`` and ``analysis`` are the pure formulas;
#: ``sources`` turn bytes into records, ``store`` is the only SQL, ``importing`` drives a
#: source into the store; ``report`` computes what the views show; ``api`` is the one door;
#: the last floor, the views, goes through that door only.
FLOORS: list[tuple[str, ...]] = [
    ("tracker.core",),
    ("tracker.fide",),
    ("tracker.analysis",),
    ("tracker.sources",),
    ("tracker.store",),
    ("tracker.importing",),
    ("tracker.report",),
    ("tracker.api",),
    ("tracker.cli", "dashboard"),
]

#: Libraries below the API (storage, HTTP, file codecs) that the views reach only through
#: ``tracker.api``: a view importing one of them holds logic of its own.
VIEW_FORBIDDEN_LIBRARIES: frozenset[str] = frozenset({
    "alembic", "berserk", "msgspec", "psycopg", "requests", "sqlalchemy", "zstandard",
})

#: The folders checked, as top-level packages under the root.
PACKAGES = ("tracker", "dashboard")
_BOTTOM, _TOP = -1, len(FLOORS)


@dataclass(frozen=True)
class Import:
    importer: str
    imported: str
    path: str
    line: int
    type_only: bool = False  # under ``if TYPE_CHECKING:``


def floor_of(module: str) -> int | None:
    """The index in :data:`FLOORS` of the floor ``module`` is on (``-1``: ``tracker._version``,
    below all; ``len(FLOORS)``: the package ``tracker`` and ``tracker.__main__``, above all),
    or ``None`` for a module in no folder of the table."""
    if module == "tracker._version":
        return _BOTTOM
    if module in ("tracker", "tracker.__main__"):
        return _TOP
    for index, folders in enumerate(FLOORS):
        if any(module == f or module.startswith(f + ".") for f in folders):
            return index
    return None


def folder_of(module: str) -> str:
    """The folder (a package of :data:`FLOORS`) ``module`` lies in, or the module itself."""
    for folders in FLOORS:
        for f in folders:
            if module == f or module.startswith(f + "."):
                return f
    return module


def may_import(importer: str, imported: str) -> bool:
    """Whether ``importer`` may import ``imported`` (both modules on a floor)."""
    mine, theirs = floor_of(importer), floor_of(imported)
    assert mine is not None and theirs is not None
    if mine == len(FLOORS) - 1:  # the views: the API only (and their own folder)
        return (folder_of(imported) in ("tracker.api", folder_of(importer))
                or theirs in (_BOTTOM, _TOP))  # the package root is the API's front door
    return theirs <= mine


def find_modules(root: Path) -> dict[str, Path]:
    """Module name → file, for every ``.py`` file of :data:`PACKAGES` under ``root``."""
    out: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join(parts)] = path
    return out


def _resolve(name: str, modules: dict[str, Path]) -> str | None:
    """The project module ``name`` loads: itself, else its longest known parent package."""
    parts = name.split(".")
    while parts:
        candidate = ".".join(parts)
        if candidate in modules:
            return candidate
        parts.pop()
    return None


def imports_of(module: str, path: Path, modules: dict[str, Path], root: Path) -> list[Import]:
    """The project modules that ``module`` imports, anywhere in its file."""
    tree = ast.parse(path.read_bytes(), filename=str(path))
    is_package = path.name == "__init__.py"
    rel = str(path.relative_to(root))
    found: list[Import] = []
    type_only = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and _is_type_checking(node.test)
        for statement in node.body
        for inner in ast.walk(statement)
    }
    docstrings = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Expr)}
    for node in ast.walk(tree):
        targets: list[str]
        if (isinstance(node, ast.Constant) and isinstance(node.value, str)
                and id(node) not in docstrings and "." in node.value
                and node.value.partition(":")[0] in modules):
            targets = [node.value.partition(":")[0]]  # "tracker.x" or "tracker.x:name": loaded
        elif isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = module.split(".") if is_package else module.split(".")[:-1]
                package = package[: len(package) - (node.level - 1)]
                base = ".".join([*package, base] if base else package)
            # "from tracker import api" loads the module tracker.api; "from tracker.fide
            # import calculate" loads the package tracker.fide.
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                       for alias in node.names]
        elif (dynamic := _dynamic_target(node)) is not None:
            targets = [dynamic]
        else:
            continue
        for target in targets:
            resolved = _resolve(target, modules)
            if resolved is not None and resolved != module:
                found.append(Import(module, resolved, rel, node.lineno, id(node) in type_only))
    return found


def library_imports(path: Path, libraries: frozenset[str]) -> list[tuple[int, str]]:
    """(line, module) of each import of one of ``libraries`` (by top-level name) in the file."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_bytes(), filename=str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            names = [node.module]
        else:
            continue
        found += [(node.lineno, n) for n in names if n.split(".")[0] in libraries]
    return found


def _is_type_checking(test: ast.expr) -> bool:
    """``TYPE_CHECKING`` or ``typing.TYPE_CHECKING``."""
    if isinstance(test, ast.Name):
        return test.id == "TYPE_CHECKING"
    return isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"


def _dynamic_target(node: ast.AST) -> str | None:
    """The literal module name of ``importlib.import_module("…")`` / ``import_module("…")``."""
    if not (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)):
        return None
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    return node.args[0].value if name == "import_module" else None


def private_imports(path: Path) -> list[tuple[int, str]]:
    """(line, name) of each import of a private module or name of another package."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_bytes(), filename=str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
        elif (target := _dynamic_target(node)) is not None:
            names = [target]
        else:
            continue
        found += [(node.lineno, n) for n in names
                  if n.split(".")[0] not in PACKAGES
                  and any(part.startswith("_") and not part.startswith("__")
                          for part in n.split(".")[1:])]
    return found


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan), members sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return sorted(out)


def _why(importer: str, imported: str) -> str:
    """Why ``importer`` may not import ``imported``."""
    if floor_of(importer) == len(FLOORS) - 1:
        return "the views import only tracker.api"
    return f"{folder_of(imported)} is above {folder_of(importer)}"


def check(root: Path) -> list[str]:
    """One line per problem in the project under ``root`` (none: the flow holds)."""
    modules = find_modules(root)
    placed = {m for m in modules if floor_of(m) is not None}
    problems = [f"{path.relative_to(root)}: {module} is in no folder of FLOORS: put it in a "
                "folder (or add the folder to FLOORS in scripts/check_imports.py)"
                for module, path in modules.items() if module not in placed]
    edges: dict[str, set[str]] = {m: set() for m in placed}
    seen: set[tuple[str, str]] = set()
    for module in sorted(placed):
        for imp in imports_of(module, modules[module], modules, root):
            if imp.imported not in placed:
                continue
            if may_import(module, imp.imported):
                if not imp.type_only:
                    edges[module].add(imp.imported)
            elif (module, imp.imported) not in seen:
                seen.add((module, imp.imported))
                problems.append(f"{imp.path}:{imp.line}: {module} imports {imp.imported}: "
                                f"{_why(module, imp.imported)}")
    views = [m for m in sorted(placed) if floor_of(m) == len(FLOORS) - 1]
    problems += [f"{modules[m].relative_to(root)}:{line}: {m} (a view) imports {name}: "
                 "the views reach it only through tracker.api"
                 for m in views
                 for line, name in library_imports(modules[m], VIEW_FORBIDDEN_LIBRARIES)]
    problems += [f"{modules[m].relative_to(root)}:{line}: {m} imports {name}: a private "
                 "module or name of a dependency"
                 for m in sorted(modules) for line, name in private_imports(modules[m])]
    problems += [f"import cycle: {' ↔ '.join(component)}" for component in _cycles(edges)]
    return problems


def main(argv: list[str]) -> int:
    root = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parent.parent
    problems = check(root)
    for line in problems:
        print(line)
    if problems:
        print(f"import flow: {len(problems)} problem(s)", file=sys.stderr)
        return 1
    print(f"import flow: OK ({len(FLOORS)} floors)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
