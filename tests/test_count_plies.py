"""The plies of movetext as Lichess exports it, counted by its separators, equal the plies
python-chess's tokenizer finds (:func:`tracker.sources.pgn.count_plies_tokenized`), for any
text the fast path accepts and for near misses it must refuse."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import CMRADE, DB2013
from tracker.sources.pgn import (
    _PLAIN_MOVETEXT,
    count_plies,
    count_plies_tokenized,
    split_games,
)

FILES = "abcdefgh"
RANKS = "12345678"
square = st.tuples(st.sampled_from(FILES), st.sampled_from(RANKS)).map("".join)
piece_move = st.tuples(
    st.sampled_from("NBKRQ"), st.sampled_from(["", *FILES]), st.sampled_from(["", *RANKS]),
    st.sampled_from(["", "x"]), square,
).map("".join)
pawn_move = st.tuples(
    st.sampled_from(["", *(f + "x" for f in FILES)]), square,
    st.sampled_from(["", "=Q", "=N", "=R", "=B"]),
).map("".join)
castling = st.sampled_from(["O-O", "O-O-O"])
#: Tokens the fast path must refuse or count as the tokenizer does: glued moves, zeros for
#: castling, NAGs, comments, variations, null moves, black move numbers, drops.
odd = st.sampled_from(["e4e5", "0-0", "0-0-0", "$1", "{ [%clk 0:01:00] }", "(", ")", "--",
                       "1...", "N@f3", "Z0", "e8Q", "exd", "!?", "e4!", "P", "x", "", "1.",
                       "a9", "i4", "Ke1-e2", ";c", "%", "."])
move = st.tuples(st.one_of(piece_move, pawn_move, castling),
                 st.sampled_from(["", "+", "#"])).map("".join)
separator = st.sampled_from([" ", " ", " ", "\n", "  ", "\t", " \n"])
result = st.sampled_from(["1-0", "0-1", "1/2-1/2", "*", "", "½-½"])


@st.composite
def movetexts(draw: st.DrawFn) -> str:
    parts: list[str] = []
    for number in range(1, draw(st.integers(0, 40)) + 1):
        parts += [f"{number}.", draw(move)]
        if draw(st.booleans()):
            parts.append(draw(move))
    if draw(st.integers(0, 3)) == 0 and parts:  # a near miss: an odd token somewhere
        parts.insert(draw(st.integers(0, len(parts))), draw(odd))
    parts.append(draw(result))
    text = parts[0]
    for part in parts[1:]:
        text += (" " if draw(st.integers(0, 5)) else draw(separator)) + part
    return text


@settings(max_examples=500, deadline=None)
@given(movetexts())
def test_separator_count_equals_the_tokenizer(movetext: str) -> None:
    assert count_plies(movetext) == count_plies_tokenized(movetext)


def test_real_exports_take_the_fast_path_and_agree() -> None:
    plain = 0
    for path in (CMRADE, DB2013):
        with path.open("rb") as f:
            for game in split_games(f):
                assert count_plies(game.movetext) == count_plies_tokenized(game.movetext)
                plain += bool(_PLAIN_MOVETEXT.fullmatch(game.movetext))
    assert plain >= 474  # every game of the Lichess export is plain
