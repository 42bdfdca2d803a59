"""The typed NDJSON decoder gives the record the general path gives, or steps aside.

:func:`tracker.sources.ndjson.typed_record` decodes an export line with msgspec straight into
the fields a record reads; for any line it returns either exactly the record of
``record_from_json(json.loads(line))`` or ``None`` (and the general path decides).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CASES, LICHESS
from tracker.sources.ndjson import read_ndjson, record_from_json, typed_record

NDJSON_FILES = sorted([*LICHESS.rglob("*.ndjson"), *CASES.glob("*.ndjson")])


def _lines() -> list[str]:
    out = []
    for path in NDJSON_FILES:
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.strip():
                out.append(line.strip())
    return out


def _general(line: str) -> Any:
    try:
        obj = json.loads(line)
    except ValueError:
        return "bad json"
    if not isinstance(obj, dict):
        return "not an object"
    try:
        return record_from_json(obj, raw=line)
    except (ValueError, AttributeError, TypeError) as exc:
        return type(exc).__name__


def _shapes(base: dict[str, Any]) -> list[dict[str, Any]]:
    """Variations of one real game in every shape the exports (or damaged files) have."""
    edits: list[tuple[tuple[str, ...], Any]] = [
        (("players", "white"), {}), (("players", "black"), {}), (("players", "white"), None),
        (("players", "white", "rating"), None), (("players", "white", "rating"), 1500.0),
        (("players", "white", "rating"), "1500"), (("players", "white", "rating"), True),
        (("players", "white", "provisional"), True), (("players", "white", "provisional"), 1),
        (("players", "black", "aiLevel"), 3), (("players", "black", "user"), None),
        (("players", "black", "user"), {}), (("players", "black", "user"), {"name": "Bob"}),
        (("players", "black", "user", "id"), ""), (("players", "white", "name"), "Anon"),
        (("players", "white", "berserk"), True), (("players", "white", "team"), "t1"),
        (("players", "white", "unknown"), 1), (("players",), {}), (("players",), None),
        (("source",), "ai"), (("source",), "lobby"), (("source",), 3),
        (("tournament",), "abcd1234"), (("tournament",), {"id": "T"}), (("tournament",), ""),
        (("swiss",), "sw1"), (("arenaTour",), {"id": "A1", "name": "x"}),
        (("arenaTour",), {}), (("swissTour",), {"id": "S1"}), (("arenaTour",), "A2"),
        (("variant",), {"key": "chess960"}), (("variant",), ""), (("variant",), "fromPosition"),
        (("speed",), None), (("perf",), ""), (("status",), "aborted"), (("status",), ""),
        (("winner",), "white"), (("winner",), None), (("winner",), 1),
        (("createdAt",), 1_600_000_000), (("createdAt",), 1.6e12), (("createdAt",), "2024-01-01"),
        (("lastMoveAt",), None), (("lastMoveAt",), 5), (("rated",), None), (("rated",), 1),
        (("moves",), ""), (("moves",), None), (("moves",), 5), (("moves",), "e4  e5"),
        (("moves",), " e4 e5"), (("moves",), "e4 e5 "), (("moves",), "e4\te5 Nf3"),
        (("moves",), "e4\u3000e5"), (("moves",), "e4\ne5"), (("moves",), " "),
        (("moves",), "e4"), (("clock",), None),
        (("clock",), {}), (("clock", "initial"), 30.0), (("opening",), {"eco": "B01"}),
        (("opening",), {"eco": 1}), (("daysPerTurn",), 3), (("initialFen",), "8/8/8"),
        (("id",), ""), (("id",), 5),
    ]
    out = []
    for path, value in edits:
        g = copy.deepcopy(base)
        node = g
        for key in path[:-1]:
            if not isinstance(node.get(key), dict):
                node[key] = {}
            node = node[key]
        node[path[-1]] = value
        out.append(g)
    return out


def test_typed_record_equals_the_general_path_on_every_fixture_line() -> None:
    lines = _lines()
    assert len(lines) > 2900
    typed = 0
    for line in lines:
        got = typed_record(line, line)
        if got is not None:
            typed += 1
            assert got == _general(line), line[:120]
    assert typed >= len(lines) - 30  # the real exports take the typed path


@pytest.mark.parametrize("base", [0, 1, 2])
def test_typed_record_equals_the_general_path_on_every_shape(base: int) -> None:
    games = [json.loads(line) for line in _lines()[:: 997][:3]]
    for g in _shapes(games[base]):
        line = json.dumps(g)
        got = typed_record(line, line)
        if got is not None:
            assert got == _general(line), line[:200]


def test_reader_keeps_its_errors_and_counts(tmp_path: Path) -> None:
    good = _lines()[0]
    text = "\n".join([good, "[1, 2]", "{bad", json.dumps({"id": "x"}), good[:50]])
    from tracker.sources.files import ReadLog

    log = ReadLog()
    records = list(read_ndjson(text.splitlines(keepends=True), log=log))
    assert len(records) == 1
    assert sum(log.skipped.values()) == 4
    assert log.truncated is not None
