"""Re-importing an NDJSON file: games stored byte for byte are counted, not parsed again, and
the outcome is the one a full parse gives (counts, player, skips, changed games updated)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import INDEXINATOR
from tracker.importing import files as importing
from tracker.importing import import_file
from tracker.store import queries
from tracker.store.db import Store


def _lines() -> list[str]:
    return INDEXINATOR.read_text(encoding="utf-8").splitlines(keepends=True)


def test_reimport_names_the_player_without_parsing_a_single_game(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    import_file(INDEXINATOR, store=store)
    parsed = {"n": 0}
    real = importing.read_ndjson

    def counting_reader(lines, **kw):  # type: ignore[no-untyped-def]
        for rec in real(lines, **kw):
            parsed["n"] += 1
            yield rec

    monkeypatch.setattr(importing, "read_ndjson", counting_reader)
    again = import_file(INDEXINATOR, store=store)
    assert (again.read, again.new, again.updated, again.unchanged) == (2907, 0, 0, 2907)
    assert (again.player, again.status, parsed["n"]) == ("indexinator", "complete", 0)
    assert queries.import_runs(store)[0].unchanged == 2907


def test_a_changed_line_is_updated_and_the_rest_unchanged(store: Store, tmp_path: Path) -> None:
    import_file(INDEXINATOR, store=store)
    lines = _lines()
    lines[5] = lines[5].replace('"status":', '"note":"edited","status":', 1)
    edited = tmp_path / "edited.ndjson"
    edited.write_text("".join(lines), encoding="utf-8")
    again = import_file(edited, store=store)
    assert (again.new, again.updated, again.unchanged) == (0, 1, 2906)


def test_reimport_for_another_player_skips_the_stored_games_as_not_theirs(
    store: Store,
) -> None:
    import_file(INDEXINATOR, store=store)
    again = import_file(INDEXINATOR, store=store, user="jes108")
    first = import_file(INDEXINATOR, store=Store("sqlite://"), user="jes108")
    assert (again.read, again.new + again.unchanged, again.skipped) == (
        first.read, first.new, first.skipped
    )
    assert again.new == 0


def test_a_line_repeated_in_the_file_is_counted_as_a_full_parse_counts_it(
    store: Store, tmp_path: Path
) -> None:
    lines = _lines()[:10]
    twice = tmp_path / "twice.ndjson"
    twice.write_text("".join([*lines, lines[3]]), encoding="utf-8")
    first = import_file(twice, store=store)
    again = import_file(twice, store=store)
    assert (first.read, again.read) == (11, 11)
    assert (again.new, again.updated, again.unchanged) == (0, 0, first.new + first.unchanged)


def test_new_games_first_then_stored_ones_are_still_not_parsed_again(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A newer export: new games at the top (newest first), the stored ones after them."""
    import_file(INDEXINATOR, store=store)
    lines = _lines()
    ids = {line[7:15] for line in lines}
    abc = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
    shift = str.maketrans(abc, abc[1:] + abc[0])
    fresh = [line[:7] + line[7:15].translate(shift) + line[15:] for line in lines[:1200]]
    assert not {line[7:15] for line in fresh} & ids
    newer = tmp_path / "newer.ndjson"
    newer.write_text("".join(fresh + lines), encoding="utf-8")
    parsed = {"n": 0}
    real = importing.read_ndjson

    def counting_reader(lines, **kw):  # type: ignore[no-untyped-def]
        for rec in real(lines, **kw):
            parsed["n"] += 1
            yield rec

    monkeypatch.setattr(importing, "read_ndjson", counting_reader)
    again = import_file(newer, store=store)
    assert (again.new, again.updated, again.unchanged) == (1200, 0, 2907)
    assert parsed["n"] < 1200 + 500  # at most one chunk of stored games parsed again
