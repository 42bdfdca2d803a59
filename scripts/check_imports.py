"""The project's import flow, checked: python scripts/check_imports.py [ROOT]

Data flows one way: sources → records → store → selection → engine → report → api → views.
Every module of ``tracker/`` and ``dashboard/`` belongs to exactly one layer of :data:`LAYERS`,
and may import only its own layer and the layers listed beside it, all earlier ones. Reported,
one line each, exit status 1:

- a module importing a layer it may not (a later one, or one it must not know, such as the
  engine importing the store); for the views (``tracker/cli/commands.py``, ``dashboard/``) that is
  anything below ``tracker.api`` but ``tracker.core.errors``;
- an import cycle among the remaining imports (the allowed imports only go to earlier layers,
  so such a cycle lies within one layer; a cycle through a forbidden import is reported as
  that import). An import under ``if TYPE_CHECKING:`` runs nothing, so it makes no cycle
  (the usual way for a module to name, in annotations only, the type of one that uses it);
- a module that no layer claims (add it to :data:`LAYERS`);
- an entry of :data:`KNOWN_VIOLATIONS` that no longer happens (delete it: the list only shrinks).

For the layers every import counts, also one inside a function or under ``TYPE_CHECKING``:
it is still a dependency. Standard library only (:mod:`ast`); nothing is imported or run.
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path

#: The layers, earliest first: (name, module patterns (fnmatch), layers it may import besides
#: its own). records.py, errors.py and config.py are the bottom that anything may import
#: (errors imports nothing); perfs.py (the perf vocabulary), fide_records.py (a FIDE profile,
#: a month of a FIDE rating list), utc.py (time), codec.py (raw text and compression),
#: exact.py (exact numbers as text), cursor.py (the sync cursor) and _version.py sit with
#: records. The import
#: runners (``importing``; ``real_fide`` for the FIDE lists) drive sources into the store, so
#: they sit above both. The selection needs only records: it decides on a game's fields, never
#: on the store's. The engine (``tracker/fide``) is pure and knows nothing of the project but
#: its errors. The strength analysis (``tracker/analysis``: Lichess's accuracy, ACPL and
#: judgments, turning points, the level model) is pure like the engine and may use the FIDE
#: scale models; its eval type (``tracker.core.evals``) sits with records so that the
#: sources and the store can carry evals, and so does the calibration of local evals
#: (``tracker.analysis.engine_calibration``), so that the engine source can name it. The
#: report (with the replay settings and the
#: presentation of a report) puts store, selection and engine together; the api is the one
#: door (the package root re-exports it); the views go through that door only.
LAYERS: list[tuple[str, tuple[str, ...], frozenset[str]]] = [
    ("errors", ("tracker.core.errors",), frozenset()),
    ("base", ("tracker.core.records", "tracker.core.config", "tracker.core.perfs", "tracker.core.fide_records",
              "tracker.core.utc", "tracker.core.codec", "tracker.core.cursor", "tracker._version",
              "tracker.core.exact", "tracker.core.evals", "tracker.analysis.engine_calibration",
              "tracker.core.forked"),
     frozenset({"errors"})),
    ("sources", ("tracker.sources", "tracker.sources.*"), frozenset({"errors", "base"})),
    ("store", ("tracker.store", "tracker.store.*"), frozenset({"errors", "base"})),
    ("importing", ("tracker.importing", "tracker.importing.*", "tracker.importing.real_fide",
                   "tracker.importing.run_liveness"),
     frozenset({"errors", "base", "sources", "store"})),
    ("selection", ("tracker.report.selection",), frozenset({"errors", "base"})),
    ("engine", ("tracker.fide", "tracker.fide.*"), frozenset({"errors"})),
    ("analysis", ("tracker.analysis", "tracker.analysis.*"),
     frozenset({"errors", "base", "engine"})),
    ("report", ("tracker.replaying", "tracker.replaying.*", "tracker.report.replay*",
                "tracker.report.calibration", "tracker.report.lad",
                "tracker.report.lichess_line", "tracker.report.replay_pass", "tracker.report.presentation",
                "tracker.report.settings", "tracker.report.game_view"),
     frozenset({"errors", "base", "store", "selection", "engine", "analysis"})),
    ("api", ("tracker", "tracker.api", "tracker.api.*", "tracker.api_*"),
     frozenset({"errors", "base", "sources", "store", "importing", "selection", "engine",
                "analysis", "report"})),
    ("views", ("tracker.cli.commands", "tracker.cli.commands.*", "tracker.cli_*", "tracker.api.launcher", "dashboard",
               "dashboard.*"),
     frozenset({"errors", "api"})),
]

#: Violations the code has today, each removed by the helper named beside it; an entry that
#: no longer happens fails the check, so this list only shrinks. (importer, imported module):
#: an import against the flow, or, within a layer, the import that closes an import cycle.
KNOWN_VIOLATIONS: frozenset[tuple[str, str]] = frozenset({
})

#: Libraries below the API (storage, HTTP, file codecs) that the views reach only through
#: ``tracker.api``: a view importing one of them holds logic of its own.
VIEW_FORBIDDEN_LIBRARIES: frozenset[str] = frozenset({
    "alembic", "berserk", "msgspec", "psycopg", "requests", "sqlalchemy", "zstandard",
})

#: The folders checked, as top-level packages under the root.
PACKAGES = ("tracker", "dashboard")


@dataclass(frozen=True)
class Import:
    importer: str
    imported: str
    path: str
    line: int
    type_only: bool = False  # under ``if TYPE_CHECKING:``


def layer_of(module: str) -> str | None:
    """The name of the layer ``module`` belongs to (the first that claims it), or ``None``."""
    for name, patterns, _ in LAYERS:
        if any(fnmatchcase(module, p) for p in patterns):
            return name
    return None


def may_import(importer_layer: str, imported_layer: str) -> bool:
    if importer_layer == imported_layer:
        return True
    return any(name == importer_layer and imported_layer in allowed
               for name, _, allowed in LAYERS)


def _rank(layer: str) -> int:
    return [name for name, _, _ in LAYERS].index(layer)


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
    for node in ast.walk(tree):
        targets: list[str]
        if isinstance(node, ast.Import):
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


def _reaches(edges: dict[str, set[str]], start: str, goal: str) -> bool:
    todo, done = [start], {start}
    while todo:
        v = todo.pop()
        if v == goal:
            return True
        for w in edges.get(v, ()):
            if w not in done:
                done.add(w)
                todo.append(w)
    return False


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


def _why(mine: str, theirs: str) -> str:
    """Why an import from layer ``mine`` of layer ``theirs`` is against the flow."""
    if mine == "views":
        return "the views import only tracker.api (and tracker.core.errors)"
    if _rank(theirs) > _rank(mine):
        return "a later layer"
    return f"the {mine} layer may not import the {theirs} layer"


def _known_cycle_imports(allowed_edges: dict[str, set[str]],
                         known: frozenset[tuple[str, str]]) -> set[tuple[str, str]]:
    """The known imports that close a cycle within a layer: left out of the cycle search
    (removed from ``allowed_edges``) and still "seen" while the module imported reaches back to
    the importer."""
    seen: set[tuple[str, str]] = set()
    for importer, imported in known:
        if imported in allowed_edges.get(importer, ()):
            allowed_edges[importer].discard(imported)
            if _reaches(allowed_edges, imported, importer):
                seen.add((importer, imported))
    return seen


def _view_library_problems(root: Path, modules: dict[str, Path],
                           layers: dict[str, str]) -> list[str]:
    """One line per import of a :data:`VIEW_FORBIDDEN_LIBRARIES` library by a view."""
    return [f"{modules[module].relative_to(root)}:{line}: {module} (views) imports {name}: "
            "the views reach it only through tracker.api"
            for module in sorted(m for m, layer in layers.items() if layer == "views")
            for line, name in library_imports(modules[module], VIEW_FORBIDDEN_LIBRARIES)]


def check(root: Path, known: frozenset[tuple[str, str]] = KNOWN_VIOLATIONS) -> list[str]:
    """One line per problem in the project under ``root`` (none: the flow holds)."""
    modules = find_modules(root)
    layers = {m: layer for m in modules if (layer := layer_of(m)) is not None}
    problems = [f"{path.relative_to(root)}: {module} belongs to no layer: add it to LAYERS in "
                "scripts/check_imports.py" for module, path in modules.items()
                if module not in layers]
    seen: set[tuple[str, str]] = set()
    allowed_edges: dict[str, set[str]] = {m: set() for m in layers}
    for module in sorted(layers):
        for imp in imports_of(module, modules[module], modules, root):
            if imp.imported not in layers:
                continue
            mine, theirs = layers[module], layers[imp.imported]
            if may_import(mine, theirs):
                if not imp.type_only:
                    allowed_edges[module].add(imp.imported)
                continue
            pair = (module, imp.imported)
            if pair in known or pair in seen:
                seen.add(pair)
                continue
            seen.add(pair)
            problems.append(f"{imp.path}:{imp.line}: {module} ({mine}) imports "
                            f"{imp.imported} ({theirs}): {_why(mine, theirs)}")
    problems += _view_library_problems(root, modules, layers)
    seen |= _known_cycle_imports(allowed_edges, known)
    for component in _cycles(allowed_edges):
        problems.append(f"import cycle: {' ↔ '.join(component)}")
    for importer, imported in sorted(known - seen):
        problems.append(f"KNOWN_VIOLATIONS: {importer} no longer imports {imported} against the "
                        "flow: delete the entry")
    return problems


def main(argv: list[str]) -> int:
    root = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parent.parent
    problems = check(root)
    for line in problems:
        print(line)
    if problems:
        print(f"import flow: {len(problems)} problem(s)", file=sys.stderr)
        return 1
    print(f"import flow: OK ({len(KNOWN_VIOLATIONS)} known violations left)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
