"""The real FIDE rating: decoding Lichess's FIDE answers, storing them, linking a player."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from alembic import command
from sqlalchemy import create_engine, inspect, text

from tests.conftest import LICHESS
from tracker.sources.fide import (
    FideIdError,
    FidePlayerData,
    ListEntry,
    decode_entry,
    decode_list,
    parse_fide_id,
    parse_profile,
    parse_rating_lists,
)
from tracker.store.db import Store, alembic_config
from tracker.store.fide import (
    linked_fide_id,
    load_fide_link,
    months_in_force,
    rating_list,
    save_fide_player,
)

EXAMPLES = LICHESS / "api-examples"
PROFILE_JSON = json.loads((EXAMPLES / "api-fide-player_35009192.json").read_text())
RATINGS_JSON = json.loads((EXAMPLES / "api-fide-player_35009192_ratings.json").read_text())
ARJUN = 35009192


def real_data() -> FidePlayerData:
    errors: list[str] = []
    data = FidePlayerData(parse_profile(PROFILE_JSON, errors),
                          parse_rating_lists(RATINGS_JSON, errors), errors)
    assert errors == []
    return data


# -- decoding --------------------------------------------------------------------------------


def test_entry_2011091584_is_september_2011_rating_1584() -> None:
    assert decode_entry(2011091584) == ListEntry("2011-09", 1584)


@pytest.mark.parametrize("entry,reason", [
    (2011131584, "month 13"),
    (2011001584, "month 0"),
    (2011090000, "rating 0"),
    (201109158, "year 201"),
    ("2011091584", "not an integer"),
    (True, "not an integer"),
    (None, "not an integer"),
    (-2011091584, "negative"),
    (2011091584.0, "not an integer"),
])
def test_malformed_entries_are_refused_with_a_reason(entry: object, reason: str) -> None:
    with pytest.raises(ValueError, match=reason):
        decode_entry(entry)


def test_a_list_skips_bad_entries_with_reasons_and_keeps_the_rest_in_month_order() -> None:
    errors: list[str] = []
    got = decode_list([2012011571, "x", 2011091584, 2011131584, 2011091584, 2011091600],
                      "standard", errors)
    assert got == [ListEntry("2011-09", 1584), ListEntry("2012-01", 1571)]
    assert len(errors) == 3
    assert errors[0] == "FIDE standard list: entry left out: not an integer YYYYMMRRRR: 'x'"
    assert "month 13" in errors[1]
    assert errors[2] == ("FIDE standard list: 2011-09 given twice (1584, then 1600); kept 1584")


def test_lists_that_are_not_lists_or_absent_are_empty_never_a_crash() -> None:
    errors: list[str] = []
    lists = parse_rating_lists({"standard": "nope", "blitz": [2020011500]}, errors)
    assert lists == {"standard": [], "rapid": [], "blitz": [ListEntry("2020-01", 1500)]}
    assert errors == ["FIDE standard list: not a list of entries (str)"]
    errors.clear()
    assert parse_rating_lists(["x"], errors) == {"standard": [], "rapid": [], "blitz": []}
    assert errors == ["FIDE ratings: not an object (list)"]


def test_the_real_answers_decode_whole() -> None:
    data = real_data()
    p = data.profile
    assert (p.fide_id, p.name, p.federation, p.birth_year, p.title) == (
        ARJUN, "Erigaisi Arjun", "IND", 2003, "GM")
    assert (p.standard, p.rapid, p.blitz) == (2782, 2708, 2738)
    std = data.lists["standard"]
    assert (len(std), len(data.lists["rapid"]), len(data.lists["blitz"])) == (143, 42, 58)
    assert std[0] == ListEntry("2011-09", 1584)
    assert std[-1] == ListEntry("2026-06", 2761)


def test_a_profile_without_ratings_or_title_has_none_there() -> None:
    errors: list[str] = []
    p = parse_profile({"id": 1, "name": "Someone", "federation": "FID", "year": 1990,
                       "standard": "high"}, errors)
    assert (p.title, p.standard, p.rapid, p.blitz) == (None, None, None, None)
    assert errors == ["FIDE profile: standard left out: 'high' is not a positive integer"]
    with pytest.raises(ValueError, match="valid id"):
        parse_profile({"name": "x"})


@pytest.mark.parametrize("text", ["", "abc", "-5", "0", "12345678901", "3.5", "٣٥"])
def test_a_fide_id_is_a_positive_number(text: str) -> None:
    with pytest.raises(FideIdError) as info:
        parse_fide_id(text)
    assert info.value.exit_code == 2


def test_months_in_force_carry_a_rating_until_the_next_entry() -> None:
    entries = [ListEntry("2011-11", 1584), ListEntry("2012-01", 1571)]
    assert months_in_force(entries, "2012-03") == [
        ("2011-11", 1584), ("2011-12", 1584), ("2012-01", 1571), ("2012-02", 1571),
        ("2012-03", 1571),
    ]
    assert months_in_force(entries) == [("2011-11", 1584), ("2011-12", 1584),
                                        ("2012-01", 1571)]
    assert months_in_force([], "2020-01") == []


def test_standard_2761_is_in_force_from_2026_06() -> None:
    force = dict(months_in_force(real_data().lists["standard"], "2026-12"))
    assert force["2026-05"] == 2751  # the 2026-04 list, still in force
    assert [force[f"2026-{m:02d}"] for m in range(6, 13)] == [2761] * 7
    assert force["2011-10"] == 1584  # a missing month keeps the previous list's rating


# -- the store -------------------------------------------------------------------------------


def test_saving_stores_the_profile_and_every_list_and_links_the_player(store: Store) -> None:
    counts = save_fide_player(store, real_data(), player_id="Someone", fetched_at_ms=1)
    assert (counts.new, counts.updated, counts.unchanged) == (243, 0, 0)
    assert linked_fide_id(store, "someone") == ARJUN
    link = load_fide_link(store, "SOMEONE")
    assert link is not None
    assert link.profile == real_data().profile
    assert link.lists == real_data().lists
    assert (link.linked_at_ms, link.fetched_at_ms) == (1, 1)


def test_saving_twice_stores_each_row_once_and_updates_what_changed(store: Store) -> None:
    save_fide_player(store, real_data(), player_id="someone", fetched_at_ms=1)
    again = save_fide_player(store, real_data(), player_id="someone", fetched_at_ms=2)
    assert (again.new, again.updated, again.unchanged) == (0, 0, 243)
    data = real_data()
    data.lists["standard"][-1] = ListEntry("2026-06", 2765)
    data.lists["standard"].append(ListEntry("2026-07", 2770))
    del data.lists["blitz"][:10]  # an answer lacking rows never deletes what is stored
    third = save_fide_player(store, data, player_id="someone", fetched_at_ms=3)
    assert (third.new, third.updated, third.unchanged) == (1, 1, 232)
    with store.engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM fide_ratings")).scalar() == 244
        assert conn.execute(text("SELECT count(*) FROM fide_players")).scalar() == 1
        assert conn.execute(text("SELECT count(*) FROM fide_links")).scalar() == 1
    assert rating_list(store, ARJUN, "standard")[-2:] == [ListEntry("2026-06", 2765),
                                                          ListEntry("2026-07", 2770)]
    link = load_fide_link(store, "someone")
    assert link is not None and (link.linked_at_ms, link.fetched_at_ms) == (1, 3)


def test_unlinked_player_has_no_link(store: Store) -> None:
    assert linked_fide_id(store, "nobody") is None
    assert load_fide_link(store, "nobody") is None


def test_migrating_from_0002_keeps_data_and_adds_the_fide_tables(db_path: Path) -> None:
    url = f"sqlite:///{db_path}"
    engine = create_engine(url)
    cfg = alembic_config()
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "0002")
        conn.execute(text("INSERT INTO players (id, username, added_at_ms) "
                          "VALUES ('someone', 'Someone', 5)"))
    assert "fide_players" not in inspect(engine).get_table_names()
    engine.dispose()
    with Store(url) as s:
        names = set(inspect(s.engine).get_table_names())
        assert {"fide_players", "fide_ratings", "fide_links"} <= names
        with s.engine.connect() as conn:
            assert conn.execute(text("SELECT version_num FROM alembic_version")).scalar() == "0003"
            assert conn.execute(text("SELECT username FROM players")).scalar() == "Someone"
        save_fide_player(s, real_data(), player_id="someone")
        assert linked_fide_id(s, "someone") == ARJUN
