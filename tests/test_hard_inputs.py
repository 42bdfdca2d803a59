"""Hard inputs (issue 6): every case of ``shared/cases`` with its README value, the whole kind of
each fault, compressed files, and the Lichess open database filtered by player."""

from __future__ import annotations

import bz2
import gzip
import io
import json
import lzma
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import chess.pgn
import pytest
import zstandard

from tests.conftest import CASES, CMRADE, DB2013, LICHESS, SINGLE, stored_rows
from tracker.core.records import GameRecord
from tracker.importing import import_file
from tracker.report import selection
from tracker.report.selection import exclusion_reason, select_games
from tracker.sources import pgn as pgn_module
from tracker.sources.files import InputError
from tracker.sources.ndjson import read_ndjson
from tracker.sources.pgn import read_pgn, split_games
from tracker.store import queries
from tracker.store.db import Store

REPAIRED = "not UTF-8, read as cp1252"


# -- helpers ------------------------------------------------------------------------------------


def pgn_records(text: str | bytes) -> list[GameRecord]:
    data = text.encode("utf-8") if isinstance(text, str) else text
    return list(read_pgn(io.BytesIO(data)))


def ndjson_records(text: str | bytes) -> list[GameRecord]:
    data = text.encode("utf-8") if isinstance(text, str) else text
    return list(read_ndjson(io.BytesIO(data)))


def all_rows(store: Store) -> list[tuple[Any, ...]]:
    """Every stored game and side, every column but the surrogate keys, sorted: two imports
    gave the same games iff their rows are equal."""
    games, sides = stored_rows(store)
    return games + sides


def reasons(store: Store, user: str) -> dict[str, str | None]:
    """Game id → why it does not count for ``user`` (``None``: it counts), over all perfs."""
    games = list(queries.player_games(store, user))
    out: dict[str, str | None] = {}
    for perf in {g.perf for g in games}:
        for sel in select_games(games, user, perf):  # type: ignore[arg-type]
            out[sel.game.id] = sel.reason
    return out


def write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


# -- the cases ----------------------------------------------------------------------------------


def test_c02_late_january_game_is_january_whatever_the_host_time_zone(tmp_path: Path) -> None:
    case = json.loads((CASES / "C02.json").read_text())
    game = case["game_in_window"]
    line = json.dumps({
        "id": game["id"], "rated": True, "variant": "standard", "speed": "blitz",
        "perf": "blitz", "createdAt": game["createdAt"], "lastMoveAt": game["lastMoveAt"],
        "status": "mate", "winner": "white",
        "players": {"white": {"user": {"name": "pawnstorm_42", "id": "pawnstorm_42"},
                              "rating": 1500, "ratingDiff": 6},
                    "black": {"user": {"name": "x", "id": "x"}, "rating": 1500,
                              "ratingDiff": -6}},
    })
    path = write(tmp_path / "late.ndjson", line.encode() + b"\n")
    pgn_path = write(tmp_path / "late.pgn", b'[Event "Rated Blitz game"]\n'
                     b'[Site "https://lichess.org/LateJan01"]\n[Date "2024.01.31"]\n'
                     b'[White "pawnstorm_42"]\n[Black "x"]\n[Result "1-0"]\n'
                     b'[UTCDate "2024.01.31"]\n[UTCTime "23:30:00"]\n\n1. e4 e5 1-0\n')
    script = (
        "import sys, time\n"
        "from tracker.importing import import_file\n"
        "from tracker.core.records import month_of\n"
        "from tracker.store.db import Store\n"
        "from tracker.store import queries\n"
        "time.tzset()\n"
        "for path in sys.argv[1:]:\n"
        "    s = Store('sqlite://')\n"
        "    import_file(path, store=s)\n"
        "    (g,) = queries.player_games(s, 'pawnstorm_42')\n"
        "    print(time.strftime('%Z'), g.id, month_of(g.created_at), month_of(g.ended_at))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script, str(path), str(pgn_path)],
        env={**os.environ, "TZ": "Europe/Berlin"}, capture_output=True, text=True, check=True,
    )
    lines = proc.stdout.split("\n")
    assert lines[0].split()[1:] == ["LateJan01", "2024-01", "2024-01"]
    assert lines[1].split()[2:] == ["2024-01", "2024-01"]  # the PGN copy (a content id)
    assert lines[0].split()[0] in ("CET", "CEST")  # the host time zone really was Berlin


def test_c03_games_against_the_ai_parse_and_are_left_out_as_computer(store: Store) -> None:
    summary = import_file(CASES / "C03.ndjson", store=store)
    assert (summary.read, summary.new, summary.skipped) == (2, 2, {})
    games = {g.id: g for g in queries.player_games(store, "rook_lover_77")}
    assert games["Ai5lvl01"].black.is_computer and games["Ai5lvl01"].black.ai_level == 5
    assert games["AiEmpty2"].black.is_computer  # {} as the opponent: the AI, level unknown
    assert games["AiEmpty2"].black.user_id is None and games["AiEmpty2"].black.rating is None
    assert reasons(store, "rook_lover_77") == {
        "Ai5lvl01": "opponent is the computer",
        "AiEmpty2": "opponent is the computer",
    }


def test_c03_kind_an_empty_side_in_a_lobby_game_is_an_anonymous_human() -> None:
    line = (CASES / "C03.ndjson").read_text().splitlines()[1]
    obj = json.loads(line)
    obj["source"] = "lobby"
    (rec,) = ndjson_records(json.dumps(obj))
    assert not rec.black.is_computer and rec.black.user_id is None
    assert exclusion_reason(rec, "white") == "opponent unrated"


def test_c04_unknown_ratings_stay_unknown_and_anonymous_is_no_player(store: Store) -> None:
    summary = import_file(CASES / "C04.pgn", store=store)
    assert (summary.new, summary.skipped) == (2, {})
    games = {g.id: g for g in queries.player_games(store, "knight_rider_9")}
    assert len(games) == 2
    anon = games["AnonG001"]
    assert anon.black.rating is None and anon.black.user_id is None
    assert anon.black.name == "Anonymous"
    (club,) = (g for g in games.values() if g.id != "AnonG001")
    assert club.white.rating is None and club.white.user_id == "queen_gambit_fan"
    ratings = [s.rating for g in games.values() for s in (g.white, g.black)]
    assert 0 not in ratings and 1500 not in ratings
    assert set(reasons(store, "knight_rider_9").values()) == {"opponent unrated"}
    assert "anonymous" not in {p.id for p in queries.list_players(store)}
    with pytest.raises(queries.UnknownPlayerError):
        queries.resolve_player(store, "Anonymous")


def test_c06_parse_side_casual_chess960_from_position_and_rated_without_diff(
    store: Store,
) -> None:
    import_file(CASES / "C06.ndjson", store=store, user="tempo_tactician")
    games = {g.id: g for g in queries.player_games(store, "tempo_tactician")}
    assert games["CasualB2"].rated is False
    assert (games["C960rt03"].variant, games["C960rt03"].perf) == ("chess960", "chess960")
    assert (games["FromPos4"].variant, games["FromPos4"].perf) == ("fromPosition", "blitz")
    assert games["FromPos4"].initial_fen == "8/5k2/8/8/8/8/4PK2/8 w - - 0 1"
    nodiff = games["RatedNoD"]
    assert nodiff.rated is True and nodiff.white.rating_diff is nodiff.black.rating_diff is None
    assert reasons(store, "tempo_tactician") == {
        "RatedBz1": "provisional opponent",
        "CasualB2": "casual",
        "C960rt03": "variant or from position",
        "FromPos4": "variant or from position",
        "RatedNoD": "rated without rating change",
    }


def test_c07_abandoned_game_is_read_but_not_counted(store: Store) -> None:
    summary = import_file(CASES / "C07.pgn", store=store)
    assert (summary.read, summary.new) == (2, 2)
    games = list(queries.player_games(store, "late_castler_1"))
    selected = [s for perf in ("correspondence", "blitz")
                for s in select_games(games, "late_castler_1", perf)]
    assert len(selected) == 2 and sum(s.counts for s in selected) == 1
    (abandoned,) = (s for s in selected if s.game.id == "AbndCo07")
    assert abandoned.game.result is None and abandoned.game.plies == 0
    assert abandoned.score_halves is None and abandoned.reason == "unfinished or aborted"


def test_c08_file_cut_mid_line_stores_two_games_and_the_run_says_so(store: Store) -> None:
    summary = import_file(CASES / "C08.ndjson", store=store)
    assert (summary.read, summary.new) == (3, 2)
    assert summary.skipped == {"truncated or invalid line": 1}
    assert summary.status == "partial"
    assert "cut in the middle" in (summary.message or "")
    assert "partial" in summary.line() and "1 truncated or invalid line" in summary.line()
    run = queries.import_runs(store)[0]
    assert (run.status, run.skipped, run.new) == ("partial", {"truncated or invalid line": 1}, 2)
    assert "incomplete" in (run.message or "")
    again = import_file(CASES / "C08.ndjson", store=store)
    assert (again.new, again.unchanged) == (0, 2)
    assert queries.count_games(store) == 2


def test_c08_kind_a_bad_line_inside_the_file_is_skipped_and_the_run_completes(
    tmp_path: Path, store: Store
) -> None:
    lines = (LICHESS / "indexinator-2025-10-later.ndjson").read_bytes().splitlines(True)
    path = write(tmp_path / "x.ndjson", b"".join([lines[0], b'{"id": "broken\n', *lines[1:]]))
    summary = import_file(path, store=store)
    assert (summary.new, summary.skipped, summary.status) == (
        10, {"truncated or invalid line": 1}, "complete"
    )
    assert any("line 2: invalid or truncated JSON" in w for w in summary.warnings)


def test_c09_byte_order_mark_and_crlf(store: Store) -> None:
    summary = import_file(CASES / "C09.pgn", store=store)
    assert (summary.new, summary.repaired, summary.warnings) == (1, {}, [])
    (g,) = queries.player_games(store, "bom_bishop")
    assert (g.white.name, g.white.rating, g.black.name, g.black.rating, g.result) == (
        "bom_bishop", 1500, "crlf_castle", 1488, "1-0"
    )
    assert "\r" not in next(queries.player_games(store, "bom_bishop", with_raw=True)).raw


def test_c09_latin1_file_is_read_as_cp1252_with_a_warning_and_counted(store: Store) -> None:
    summary = import_file(CASES / "C09-latin1.pgn", store=store)
    assert summary.new == 1
    assert summary.repaired == {REPAIRED: 1}
    assert any("not UTF-8" in w for w in summary.warnings)
    assert "repaired 1 (1 not UTF-8, read as cp1252)" in summary.line()
    assert queries.import_runs(store)[0].repaired == {REPAIRED: 1}
    (g,) = queries.player_games(store, "bom_bishop")
    assert (g.white.name, g.white.rating, g.black.name, g.black.rating, g.result) == (
        "Ádám_pawn", 1620, "bom_bishop", 1506, "0-1"
    )


def test_c09_kind_only_the_game_that_is_not_utf8_is_repaired(store: Store, tmp_path: Path
                                                             ) -> None:
    good = (CASES / "C09.pgn").read_bytes()
    latin = (CASES / "C09-latin1.pgn").read_bytes()
    path = write(tmp_path / "mixed.pgn", good + b"\n" + latin + b"\n" + good.replace(
        b"BomGame9", b"BomGameA"))
    summary = import_file(path, store=store)
    assert (summary.new, summary.repaired) == (3, {REPAIRED: 1})
    names = {g.white.name for g in queries.player_games(store, "bom_bishop")}
    assert names == {"bom_bishop", "Ádám_pawn"}


def test_c10_games_without_separating_blank_lines(store: Store) -> None:
    text = (CASES / "C10.pgn").read_text()
    # the trap: python-chess alone cuts this file into 4 "games"
    naive = []
    stream = io.StringIO(text)
    while (game := chess.pgn.read_game(stream)) is not None:
        naive.append(game)
    assert len(naive) == 4
    summary = import_file(CASES / "C10.pgn", store=store)
    assert summary.new == 3
    games = list(queries.player_games(store, "gap_gambit"))
    assert [(g.id, g.white.name, g.black.name, g.result) for g in games] == [
        ("SepGame1", "gap_gambit", "tight_tempo", "1-0"),
        ("SepGame2", "tight_tempo", "gap_gambit", "0-1"),
        ("SepGame3", "gap_gambit", "wide_spacer", "1/2-1/2"),
    ]
    selected = select_games(games, "gap_gambit", "rapid")
    assert sum(s.score_halves or 0 for s in selected) / 2 == 2.5 and len(selected) == 3


def test_c11_escaped_quotes_and_backslashes_are_unescaped(store: Store) -> None:
    import_file(CASES / "C11.pgn", store=store)
    (g,) = queries.player_games(store, 'sam "the rook" vale')
    assert g.white.name == 'Sam "The Rook" Vale'
    assert g.black.name == "Rio\\Grande_77"


# -- PGN: the whole kind of each fault ----------------------------------------------------------


GAME = """[Event "Rated Blitz game"]
[Site "https://lichess.org/{id}"]
[Date "2024.05.01"]
[White "{white}"]
[Black "{black}"]
[Result "1-0"]
[UTCDate "2024.05.01"]
[UTCTime "10:00:00"]
[WhiteElo "1500"]
[BlackElo "1500"]
[WhiteRatingDiff "+5"]
[BlackRatingDiff "-5"]
[TimeControl "180+0"]

1. e4 e5 2. Nf3 Nc6 1-0
"""


def game(gid: str = "Game0001", white: str = "alice", black: str = "bob") -> str:
    return GAME.format(id=gid, white=white, black=black)


def test_games_without_moves_and_without_blank_lines_are_cut_at_the_repeated_tag() -> None:
    text = '[Event "A"]\n[White "a"]\n[Black "b"]\n[Result "*"]\n[Date "2024.01.01"]\n' \
           '[Event "B"]\n[White "c"]\n[Black "d"]\n[Result "*"]\n[Date "2024.01.02"]\n'
    games = list(split_games(io.BytesIO(text.encode())))
    assert [g.headers["Event"] for g in games] == ["A", "B"]


def test_a_byte_order_mark_in_the_middle_of_concatenated_files_is_ignored() -> None:
    data = game("Game0001").encode() + b"\n\xef\xbb\xbf" + game("Game0002").encode()
    assert [r.id for r in pgn_records(data)] == ["Game0001", "Game0002"]


def test_crlf_line_ends_everywhere() -> None:
    data = (game("Game0001") + "\n" + game("Game0002")).replace("\n", "\r\n").encode()
    recs = pgn_records(data)
    assert [(r.id, r.plies, r.white.rating_diff) for r in recs] == [
        ("Game0001", 4, 5), ("Game0002", 4, 5)
    ]


def test_escapes_in_any_tag_are_undone() -> None:
    text = game().replace('[Event "Rated Blitz game"]', '[Event "Rated \\"Blitz\\" game \\\\o/"]')
    (g,) = split_games(io.BytesIO(text.encode()))
    assert g.headers["Event"] == 'Rated "Blitz" game \\o/'


@pytest.mark.parametrize("elo", ["?", "-", "", "0", "abc"])
def test_unknown_ratings_are_none_never_a_number(elo: str) -> None:
    (r,) = pgn_records(game().replace('[BlackElo "1500"]', f'[BlackElo "{elo}"]'))
    assert r.black.rating is None


@pytest.mark.parametrize("name", ["lichess AI level 8", "lichess AI level 1"])
def test_the_lichess_ai_is_the_computer(name: str) -> None:
    text = game(black=name).replace('[BlackElo "1500"]', '[BlackElo "?"]')
    (r,) = pgn_records(text)
    assert r.black.is_computer and r.black.user_id is None and r.black.rating is None
    assert exclusion_reason(r, "white") == "opponent is the computer"


def test_anonymous_is_never_a_username() -> None:
    (r,) = pgn_records(game(white="Anonymous").replace('[WhiteElo "1500"]', '[WhiteElo "?"]'))
    assert r.white.user_id is None and r.white.name == "Anonymous"
    assert r.color_of("anonymous") is None
    assert exclusion_reason(r, "black") == "opponent unrated"


def test_abandoned_game_without_moves() -> None:
    text = game().replace('[Result "1-0"]', '[Result "*"]').replace("1. e4 e5 2. Nf3 Nc6 1-0", "*")
    (r,) = pgn_records(text)
    assert (r.result, r.plies) == (None, 0)
    assert exclusion_reason(r, "white") == "unfinished or aborted"


@pytest.mark.parametrize(
    ("tag", "variant", "perf"),
    [
        ("Standard", "standard", "blitz"),
        ("Chess960", "chess960", "chess960"),
        ("From Position", "fromPosition", "blitz"),
        ("Crazyhouse", "crazyhouse", "crazyhouse"),
        ("Antichess", "antichess", "antichess"),
        ("Atomic", "atomic", "atomic"),
        ("Horde", "horde", "horde"),
        ("King of the Hill", "kingOfTheHill", "kingOfTheHill"),
        ("Racing Kings", "racingKings", "racingKings"),
        ("Three-check", "threeCheck", "threeCheck"),
    ],
)
def test_every_lichess_variant(tag: str, variant: str, perf: str) -> None:
    (r,) = pgn_records(game().replace('[TimeControl', f'[Variant "{tag}"]\n[TimeControl'))
    assert (r.variant, r.perf) == (variant, perf)
    assert (exclusion_reason(r, "white") is None) == (variant == "standard")


def test_a_game_from_a_position_without_a_variant_tag_is_from_position() -> None:
    fen = "8/5k2/8/8/8/8/4PK2/8 w - - 0 1"
    (r,) = pgn_records(game().replace("[TimeControl", f'[SetUp "1"]\n[FEN "{fen}"]\n[TimeControl'))
    assert (r.variant, r.initial_fen) == ("fromPosition", fen)
    assert exclusion_reason(r, "white") == "variant or from position"


def test_old_export_without_event_utcdate_or_rating_diff_uses_date_and_rated_is_unknown(
) -> None:
    text = ('[Site "https://lichess.org/OldGame1"]\n[Date "2013.01.05"]\n[White "alice"]\n'
            '[Black "bob"]\n[Result "0-1"]\n[WhiteElo "1400"]\n[BlackElo "1450"]\n'
            '[TimeControl "300+0"]\n\n1. e4 e5 0-1\n')
    (r,) = pgn_records(text)
    assert (r.id, r.created_at.isoformat(), r.rated, r.speed) == (
        "OldGame1", "2013-01-05T00:00:00+00:00", None, "blitz"
    )
    assert exclusion_reason(r, "white") == "rated unknown"


def test_the_import_says_when_games_are_not_known_rated_or_have_no_speed(store: Store) -> None:
    summary = import_file(CASES / "C11.pgn", store=store)
    assert summary.new == 1
    assert summary.warnings == [
        'C11.pgn: 1 game(s) do not say whether they were rated (no "Rated" or "Casual" Event, '
        'no RatingDiff tag): stored, but not counted in a replay ("rated unknown")',
        "C11.pgn: 1 game(s) have no TimeControl and no speed in their Event: stored, but in no "
        "perf (bullet, blitz, …), so in no replay",
    ]


def test_new_export_with_lowercase_event_and_gameid_tag() -> None:
    text = game().replace("Rated Blitz game", "rated blitz game").replace(
        '[WhiteRatingDiff "+5"]\n[BlackRatingDiff "-5"]\n', "").replace(
        '[Site "https://lichess.org/Game0001"]', '[Site "https://lichess.org/Game0001"]\n'
        '[GameId "Game0001"]')
    (r,) = pgn_records(text)
    assert (r.id, r.rated) == ("Game0001", True)


def test_casual_and_simul_games_are_not_rated() -> None:
    (casual,) = pgn_records(game().replace("Rated Blitz game", "Casual Blitz game").replace(
        '[WhiteRatingDiff "+5"]\n[BlackRatingDiff "-5"]\n', ""))
    assert casual.rated is False
    (simul,) = pgn_records((LICHESS / "api-examples" /
                            "api-games-user_lance5500_max1_simul-no-moves_2026-05.pgn").read_text())
    assert (simul.rated, simul.plies, simul.result, simul.black.title) == (False, 0, "0-1", "LM")


def test_comments_clocks_evals_and_side_variations_are_not_moves() -> None:
    movetext = (
        "1. e4 { [%eval 0.2] [%clk 0:03:00] } 1... e5 { [%clk 0:03:00]\n"
        '[Event "not a tag: inside a comment"] } 2. Nf3 (2. Nc3 Nf6 (2... Nc6) 3. f4) 2... Nc6 $1'
        " ; a rest-of-line comment 3. d4\n3. Bb5 a6?! 4. Ba4 1-0"
    )
    (r,) = pgn_records(game().replace("1. e4 e5 2. Nf3 Nc6 1-0", movetext))
    assert r.plies == 7 and r.result == "1-0"


def test_brace_comments_do_not_nest_so_the_next_tag_starts_a_game() -> None:
    first = game("Game0001").replace("1. e4 e5", "1. e4 { a { b } e5")
    recs = pgn_records(first + game("Game0002"))  # no blank line between them either
    assert [(r.id, r.plies) for r in recs] == [("Game0001", 4), ("Game0002", 4)]


def test_tag_lines_are_read_as_python_chess_reads_them() -> None:
    text = game().replace('[White "alice"]', '[White \t  "alice"]').replace(
        '[Date "2024.05.01"]', '[Date "2024.05.01"]\n[Odd_Tag+1 "v"]')
    (g,) = split_games(io.BytesIO(text.encode()))
    assert g.headers["White"] == "alice" and g.headers["Odd_Tag+1"] == "v"
    # not tags in python-chess's grammar: a name with a space, no space before the value
    for bad in ('[Two words "x"]', '[Name"x"]'):
        (h,) = split_games(io.BytesIO((game() + bad + "\n").encode()))
        assert bad in h.movetext


def test_a_percent_escape_line_is_ignored() -> None:
    (r,) = pgn_records(game().replace("1. e4 e5", "% exported by a tool\n1. e4 e5"))
    assert r.plies == 4


def _plies_as_python_chess_tokenizes(movetext: str) -> int:
    """The reference: python-chess's MOVETEXT_REGEX, token by token, main line only (brace
    and rest-of-line comments cut first, as python-chess's parser skips them)."""
    movetext = pgn_module._COMMENTS.sub(" ", movetext)
    plies = depth = 0
    for match in chess.pgn.MOVETEXT_REGEX.finditer(movetext):
        token = match.group(0)
        if token[0] in "{;$?!":
            continue
        if token == "(":
            depth += 1
        elif token == ")":
            depth = max(depth - 1, 0)
        elif depth == 0 and token not in ("1-0", "0-1", "1/2-1/2", "*", "--"):
            plies += 1
    return plies


def test_tags_and_plies_agree_with_python_chess_on_every_real_game() -> None:
    paths = [CMRADE, DB2013, SINGLE, *(LICHESS / "api-examples").glob("*.pgn")]
    n = 0
    for path in paths:
        stream = io.StringIO(path.read_text())
        ours = list(split_games(io.BytesIO(path.read_bytes())))
        for g in ours:
            theirs = chess.pgn.read_game(stream)
            assert theirs is not None
            assert dict(theirs.headers) == {**theirs.headers, **g.headers}  # same values
            assert set(g.headers) <= set(theirs.headers) | {"GameId"}
            assert pgn_module.count_plies(g.movetext) == len(list(theirs.mainline_moves()))
            assert pgn_module.count_plies(g.movetext) == _plies_as_python_chess_tokenizes(
                g.movetext)
            n += 1
    assert n == 474 + 50 + 1 + 2


@pytest.mark.parametrize("movetext", [
    "1. e4 (1. d4 d5 (1... Nf6 2. c4) 2. c4) 1... e5 2. Nf3 1-0",
    "1. e4 e5 (2. Nf3",
    "1. e4 ) e5 2. Nf3",
    "1.e4 e5!? 2.Nf3?? $2 Nc6 3. -- Nf6 *",
    "1. e4 {a (b} e5 ; (x\n2. Nf3 1/2-1/2",
    "1. O-O-O 0-0 2. e8=Q exd8=N+",
])
def test_plies_in_odd_movetext_agree_with_python_chess_tokenizer(movetext: str) -> None:
    assert pgn_module.count_plies(movetext) == _plies_as_python_chess_tokenizes(movetext)


def test_the_speed_comes_from_the_event_when_there_is_no_time_control() -> None:
    (r,) = pgn_records(game().replace('[TimeControl "180+0"]\n', ""))
    assert r.speed == r.perf == "blitz"
    (r,) = pgn_records(game().replace('[TimeControl "180+0"]', '[TimeControl "-"]'))
    assert r.speed == "correspondence"
    (r,) = pgn_records(game().replace('[TimeControl "180+0"]\n', "").replace(
        "Rated Blitz game", "Club match"))
    assert r.speed is None and r.perf is None


def test_the_result_comes_from_the_movetext_when_the_tag_is_missing() -> None:
    (r,) = pgn_records(game().replace('[Result "1-0"]\n', ""))
    assert r.result == "1-0"


def test_games_without_a_site_id_get_a_stable_content_id(store: Store, tmp_path: Path) -> None:
    plain = (CASES / "C11.pgn").read_bytes()
    first = import_file(CASES / "C11.pgn", store=store)
    gz = write(tmp_path / "copy.pgn.gz", gzip.compress(plain))
    again = import_file(gz, store=store)
    assert (first.new, again.new, again.unchanged) == (1, 0, 1)
    (g,) = queries.player_games(store, "rio\\grande_77")
    assert g.id.startswith("pgn-") and g.id == pgn_records(plain)[0].id
    other = pgn_records(plain.replace(b"Qxf7#", b"Qxf7+"))[0]
    assert other.id != g.id  # a different game, a different id


def test_a_study_export_is_refused_before_anything_is_written(tmp_path: Path,
                                                             store: Store) -> None:
    study = ('[Event "Endgames: Lucena"]\n[Site "https://lichess.org/study/AbCdEfGh/IjKlMnOp"]\n'
             '[Result "*"]\n[StudyName "Endgames"]\n[ChapterName "Lucena"]\n\n1. Rd1 *\n\n')
    path = write(tmp_path / "study.pgn", (study * 3).encode())
    with pytest.raises(InputError, match="study export, not a game history"):
        import_file(path, store=store)
    assert queries.import_runs(store) == [] and queries.count_games(store) == 0


def test_study_chapters_inside_a_game_file_are_skipped_and_counted(tmp_path: Path,
                                                                  store: Store) -> None:
    chapter = ('[Event "Endgames: Lucena"]\n[Site "https://lichess.org/study/AbCdEfGh/IjKlMnOp"]'
               '\n[Date "2024.01.01"]\n[Result "*"]\n\n1. Rd1 *\n\n')
    path = write(tmp_path / "mixed.pgn", (game() + "\n" + chapter).encode())
    summary = import_file(path, store=store)
    assert (summary.new, summary.skipped) == (1, {"study chapter": 1})


def test_a_game_without_a_date_is_skipped_as_unreadable_with_its_line(tmp_path: Path,
                                                                     store: Store) -> None:
    bad = game("Game0002").replace('[Date "2024.05.01"]\n', "").replace(
        '[UTCDate "2024.05.01"]\n', "")
    path = write(tmp_path / "x.pgn", (game() + "\n" + bad).encode())
    summary = import_file(path, store=store)
    assert (summary.new, summary.skipped) == (1, {"unreadable game": 1})
    assert summary.warnings == ["x.pgn: game at line 17: no usable date (no Date tag)"]


# -- NDJSON: the whole kind ---------------------------------------------------------------------


def lichess_json(**fields: Any) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "id": "Json0001", "rated": True, "variant": "standard", "speed": "blitz",
        "perf": "blitz", "createdAt": 1717243200000, "lastMoveAt": 1717243620000,
        "status": "resign", "winner": "white",
        "players": {"white": {"user": {"name": "Alice", "id": "alice"}, "rating": 1600,
                              "ratingDiff": 7},
                    "black": {"user": {"name": "Bob", "id": "bob"}, "rating": 1650,
                              "ratingDiff": -7}},
    }
    obj.update(fields)
    return obj


def test_ndjson_byte_order_mark_blank_lines_and_crlf() -> None:
    a = json.dumps(lichess_json(id="Json0001"))
    b = json.dumps(lichess_json(id="Json0002"))
    data = b"\xef\xbb\xbf" + f"{a}\r\n\r\n\n{b}\r\n\n".encode()
    assert [r.id for r in ndjson_records(data)] == ["Json0001", "Json0002"]


def test_ndjson_tournament_ids_old_and_new_shapes() -> None:
    shapes = [
        {"tournament": "winter17"},
        {"arenaTour": {"id": "winter17", "name": "Winter Marathon"}},
        {"swiss": "swiss123"},
        {"swissTour": {"id": "swiss123"}},
    ]
    recs = ndjson_records("\n".join(json.dumps(lichess_json(**s)) for s in shapes))
    assert [r.tournament_id for r in recs] == ["winter17", "winter17", "swiss123", "swiss123"]


@pytest.mark.parametrize(
    ("black", "user_id", "rating", "computer"),
    [
        ({"rating": 1500}, None, 1500, False),  # no user: anonymous with a rating
        ({"user": {"name": "Bob", "id": "bob"}}, "bob", None, False),  # no rating
        ({"name": "Guest"}, None, None, False),  # a player without an account
        ({"aiLevel": 3}, None, None, True),
        ({}, None, None, True),
    ],
)
def test_ndjson_players_of_every_shape(black: dict[str, Any], user_id: str | None,
                                       rating: int | None, computer: bool) -> None:
    obj = lichess_json()
    obj["players"]["black"] = black
    (r,) = ndjson_records(json.dumps(obj))
    assert (r.black.user_id, r.black.rating, r.black.is_computer) == (user_id, rating, computer)


def test_ndjson_older_objects_without_perf_or_rated() -> None:
    obj = lichess_json(variant={"key": "atomic", "name": "Atomic"})
    del obj["perf"], obj["rated"]
    (r,) = ndjson_records(json.dumps(obj))
    assert (r.variant, r.perf, r.rated) == ("atomic", "atomic", None)


def test_ndjson_times_saved_as_iso_text_are_read_as_utc() -> None:
    (r,) = ndjson_records(json.dumps(lichess_json(createdAt="2024-06-01T12:00:00+00:00",
                                                  lastMoveAt="2024-06-01T12:07:00Z")))
    assert (r.created_at.isoformat(), r.last_move_at.isoformat()) == (  # type: ignore[union-attr]
        "2024-06-01T12:00:00+00:00", "2024-06-01T12:07:00+00:00"
    )


def test_ndjson_line_that_is_not_utf8_is_repaired(tmp_path: Path, store: Store) -> None:
    line = json.dumps(lichess_json(), ensure_ascii=False).replace("Alice", "Zoë")
    path = write(tmp_path / "x.ndjson", line.encode("cp1252") + b"\n")
    summary = import_file(path, store=store)
    assert (summary.new, summary.repaired) == (1, {REPAIRED: 1})
    (g,) = queries.player_games(store, "alice")
    assert g.white.name == "Zoë"


# -- encodings and compression ------------------------------------------------------------------


def test_utf16_file_with_byte_order_mark(tmp_path: Path, store: Store) -> None:
    path = write(tmp_path / "windows.pgn", (CASES / "C11.pgn").read_text().encode("utf-16"))
    summary = import_file(path, store=store)
    assert summary.new == 1
    (g,) = queries.player_games(store, "rio\\grande_77")
    assert g.white.name == 'Sam "The Rook" Vale'


COMPRESSORS = {
    ".pgn": lambda b: b,
    ".pgn.gz": gzip.compress,
    ".pgn.bz2": bz2.compress,
    ".pgn.zst": lambda b: zstandard.ZstdCompressor().compress(b),
    ".pgn.xz": lzma.compress,
}


def test_the_2013_slice_gives_the_same_50_rows_plain_or_compressed(tmp_path: Path) -> None:
    data = DB2013.read_bytes()
    results = {}
    for suffix, compress in COMPRESSORS.items():
        path = write(tmp_path / f"lichess_db_standard_rated_2013-01{suffix}", compress(data))
        with Store("sqlite://") as s:
            summary = import_file(path, store=s)
            assert (summary.new, summary.status) == (50, "complete"), suffix
            results[suffix] = all_rows(s)
    first = results[".pgn"]
    assert len(first) == 50 + 100  # 50 games, 100 sides
    for suffix, rows in results.items():
        assert rows == first, suffix


def test_a_compressed_file_named_plain_is_still_read(tmp_path: Path, store: Store) -> None:
    path = write(tmp_path / "games.pgn", gzip.compress(DB2013.read_bytes()))
    assert import_file(path, store=store).new == 50


@pytest.mark.parametrize("suffix", [".pgn.gz", ".pgn.bz2", ".pgn.zst", ".pgn.xz"])
def test_a_cut_compressed_file_imports_what_it_holds_and_ends_partial(
    tmp_path: Path, store: Store, suffix: str
) -> None:
    plain = CMRADE.read_bytes()  # bigger than a compressed block (bzip2: level 1, 100 kB)
    data = bz2.compress(plain, 1) if suffix == ".pgn.bz2" else COMPRESSORS[suffix](plain)
    path = write(tmp_path / f"cut{suffix}", data[: len(data) * 2 // 3])
    summary = import_file(path, store=store)
    assert summary.status == "partial" and 100 < summary.new < 474
    assert "ends early or is damaged" in (summary.message or "")


# -- the Lichess open database ------------------------------------------------------------------

SHARED_PGN = [
    CMRADE,
    DB2013,
    SINGLE,
    LICHESS / "api-examples" / "api-games-user_lance5500_max1_2026-07.pgn",
    LICHESS / "api-examples" / "api-games-user_lance5500_max1_simul-no-moves_2026-05.pgn",
    *sorted(CASES.glob("*.pgn")),
]


@pytest.fixture(scope="module")
def dump(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shared PGN files concatenated and zstd-compressed, like a monthly dump."""
    path = tmp_path_factory.mktemp("dump") / "lichess_db_standard_rated_2099-01.pgn.zst"
    with path.open("wb") as out, zstandard.ZstdCompressor().stream_writer(out) as w:
        for p in SHARED_PGN:
            w.write(p.read_bytes())
            w.write(b"\n\n")
    return path


def test_dump_filtered_for_cmrade_gives_exactly_the_plain_import_of_cmrade(dump: Path) -> None:
    with Store("sqlite://") as plain, Store("sqlite://") as filtered:
        expected = import_file(CMRADE, store=plain)
        summary = import_file(dump, store=filtered, user="cmrade")
        assert summary.new == expected.new == 474
        assert all_rows(filtered) == all_rows(plain)
        assert summary.player == "cmrade" and summary.status == "complete"
        total = sum(len(list(split_games(io.BytesIO(p.read_bytes())))) for p in SHARED_PGN)
        assert summary.skipped == {"not the player's game": total - 474}
        assert summary.read == total


def test_dump_filter_reads_only_the_headers_of_the_games_it_drops(
    dump: Path, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    built: list[int] = []
    real = pgn_module._build

    def counting_build(*args: Any) -> Any:
        built.append(1)
        return real(*args)

    monkeypatch.setattr(pgn_module, "_build", counting_build)
    summary = import_file(dump, store=store, user=["Lance5500", "BFG9k"])
    # lance5500: the single game and two API examples; bfg9k: 2 games of the 2013 slice
    assert summary.new == 5
    assert len(built) == 5  # only kept games were decoded and tokenized


def test_dump_with_several_users_and_the_cli(dump: Path, tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    proc = subprocess.run(
        [sys.executable, "-m", "tracker.cli.commands", "--db", str(db), "import-file", str(dump),
         "--user", "cmrade", "--user", "lance5500"],
        capture_output=True, text=True,
    )
    assert proc.returncode == 0, proc.stderr
    line = proc.stdout.strip()
    assert line.startswith("cmrade: read ") and "new 477" in line
    assert "not the player's game" in line and line.endswith("complete")
    with Store(str(db)) as s:
        assert {p.id for p in queries.list_players(s)} >= {"cmrade"}
        assert queries.import_runs(s)[0].skipped["not the player's game"] > 0


# -- the cmrade download ------------------------------------------------------------------------


def test_cmrade_474_games_ai_and_abandoned_stored_and_left_out_with_their_reasons(
    store: Store,
) -> None:
    summary = import_file(CMRADE, store=store)
    assert (summary.new, summary.skipped, summary.repaired) == (474, {}, {})
    games = list(queries.player_games(store, "cmrade"))
    assert len(games) == 474
    why = reasons(store, "cmrade")
    ai = [g for g in games if g.side("black" if g.color_of("cmrade") == "white"
                                     else "white").is_computer]
    assert len(ai) == 4
    assert {why[g.id] for g in ai} == {"opponent is the computer"}
    abandoned = [g for g in games if g.status == "abandoned"]
    assert len(abandoned) == 4
    assert {why[g.id] for g in abandoned} == {"fewer than 2 plies"}
    casual = [g for g in games if g.rated is False]
    assert len(casual) == 94
    assert all(why[g.id] is not None for g in casual)  # casual games never count
    assert sum(why[g.id] == selection.CASUAL for g in casual) == 90  # the 4 AI games say so
