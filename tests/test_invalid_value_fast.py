"""invalid_value's quick check never lets through what the field-by-field check refuses."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest

from tests.conftest import CMRADE, INDEXINATOR
from tracker.core.records import GameRecord, Side, invalid_value, why_invalid
from tracker.sources.ndjson import read_ndjson
from tracker.sources.pgn import read_pgn


class Text(str):
    pass


class Int(int):
    pass


GOOD = GameRecord(
    id="abcdefgh", source="ndjson", created_at=datetime(2024, 1, 2, tzinfo=UTC),
    white=Side("a", "A", None, 1500, 5, False, None), black=Side("b", "B", "GM", 1600, -5),
    last_move_at=datetime(2024, 1, 2, 0, 5, tzinfo=UTC), rated=True, variant="standard",
    speed="blitz", perf="blitz", status="mate", result="1-0", plies=40, clock_initial=180,
    clock_increment=2, eco="B01", opening_name="Scandinavian", raw="{}",
)

#: Values tried in every field: right and wrong types, at and past each limit.
VALUES: list[Any] = [
    None, "", "x", "x" * 8, "x" * 9, "x" * 16, "x" * 17, "x" * 32, "x" * 33, "x" * 64,
    "x" * 65, "x" * 128, "x" * 129, "x" * 200, "x" * 201, "x" * 400, "x" * 401, Text("t"),
    b"x", 0, -1, 1, 8, 9, 10_000, 10_001, -10_000, -10_001, 100_000, 100_001, 10**7,
    10**7 + 1, 10**30, True, False, Int(5), 1.0, 1.5, [], {},
    datetime(2024, 1, 1, tzinfo=UTC), datetime(2024, 1, 1),
    datetime(999, 12, 31, tzinfo=UTC), datetime(1000, 1, 1, tzinfo=UTC),
    datetime(2999, 12, 31, tzinfo=UTC), datetime(2024, 1, 1, tzinfo=timezone(timedelta(hours=2))),
    Side(), "white",
]


def _variants() -> list[GameRecord]:
    out = [GOOD]
    for f in dataclasses.fields(GameRecord):
        for v in VALUES:
            out.append(dataclasses.replace(GOOD, **{f.name: v}))
    for color in ("white", "black"):
        side = getattr(GOOD, color)
        for f in dataclasses.fields(Side):
            for v in VALUES:
                out.append(dataclasses.replace(
                    GOOD, **{color: dataclasses.replace(side, **{f.name: v})}))
    return out


def test_the_quick_check_agrees_with_the_full_one_on_every_edited_field() -> None:
    records = _variants()
    assert len(records) > 1500
    refused = 0
    for r in records:
        full = why_invalid(r)
        assert invalid_value(r) == full, r
        refused += full is not None
    assert refused > 500  # the edits do reach the limits


@pytest.mark.parametrize("path", [INDEXINATOR, CMRADE])
def test_every_real_game_passes_both_checks(path: Any) -> None:
    data = path.read_bytes()
    if path.suffix == ".ndjson":
        records = list(read_ndjson(data.splitlines(keepends=True)))
    else:
        records = list(read_pgn(data.splitlines(keepends=True)))
    assert len(records) > 400
    for r in records:
        assert invalid_value(r) is None and why_invalid(r) is None
