"""The evals a PGN game carries: Lichess's ``{ [%eval 0.23] }`` / ``{ [%eval #-3] }`` comment
after each move, and its judgment glyphs (``?!`` Inaccuracy, ``?`` Mistake, ``??`` Blunder,
or NAGs ``$6``, ``$2``, ``$4``).

Pure: movetext in, :class:`~tracker.core.records.Analysis` out. Read only when the movetext holds
``%eval`` (one substring test per game), so a PGN import without evals costs nothing more.
An eval in pawns becomes centipawns (``0.23`` → 23); a ply without an eval comment (the
checkmated final position, a hole) has ``PlyEval(None, None)``; side variations ``( … )`` are
not the game and are skipped. A PGN gives no ``best`` move (Lichess writes it in SAN in a
literate comment, if at all).
"""

from __future__ import annotations

import re
from typing import Final

from tracker.core.evals import PlyEval
from tracker.core.records import Analysis

#: Comments, variation brackets, NAGs and moves (with their glyphs), in the order they come.
_TOKENS: Final = re.compile(
    r"\{(?P<comment>[^}]*)\}|;[^\n]*|(?P<open>\()|(?P<close>\))|\$(?P<nag>\d+)"
    r"|\d+\.+|(?:1-0|0-1|1/2-1/2|\*)(?=\s|$)"
    r"|(?P<move>[A-Za-z0-9@][^\s{}();$?!]*)(?P<glyph>[?!]*)"
)
#: ``[%eval 0.23]``, ``[%eval -1.5]``, ``[%eval #-3]`` (optionally followed by ``,depth``).
_EVAL: Final = re.compile(r"\[%eval\s+(?:#(?P<mate>[+-]?\d+)|(?P<pawns>[+-]?\d+(?:\.\d+)?))")
_GLYPHS: Final = {"?!": "Inaccuracy", "?": "Mistake", "??": "Blunder"}
_NAGS: Final = {"6": "Inaccuracy", "2": "Mistake", "4": "Blunder"}
#: ``|cp|`` or ``|mate|`` beyond this is a broken value: that eval is dropped and counted
#: (:attr:`Analysis.dropped`), the game kept.
_MAX_EVAL: Final = 100_000
#: Digits past which a number is out of range before it is read (400 digits of pawns would
#: overflow a float, 5,000 of a mate pass Python's limit on int()).
_MAX_DIGITS: Final = 12


def pgn_analysis(movetext: str) -> Analysis | None:
    """The evals of a game's movetext, or ``None`` when it has none. An eval out of range
    (beyond :data:`_MAX_EVAL`, or a number too long to read) is dropped: no eval at its ply,
    counted in :attr:`Analysis.dropped`.

    >>> a = pgn_analysis("1. e4 { [%eval 0.17] } 1... e5?! { [%eval #-3] } 2. Qh5 1-0")
    >>> [(e.cp, e.mate, e.judgment) for e in a.evals]
    [(17, None, None), (None, -3, 'Inaccuracy')]
    """
    if "%eval" not in movetext:
        return None
    evals: list[PlyEval] = []
    if not _main_line_evals(movetext, evals):
        return None
    dropped = 0
    for i, e in enumerate(evals):
        if abs(e.cp or 0) > _MAX_EVAL or abs(e.mate or 0) > _MAX_EVAL:
            evals[i] = e._replace(cp=None, mate=None)  # a broken value: this eval dropped
            dropped += 1
    while evals and not evals[-1].known:
        evals.pop()  # the checkmated final position, or moves after the last eval
    return Analysis(tuple(evals), dropped=dropped)


def _main_line_evals(movetext: str, evals: list[PlyEval]) -> bool:
    """Append one eval per main-line ply to ``evals``; True when any comment had an eval."""
    found = False
    depth = 0
    for m in _TOKENS.finditer(movetext):
        if m.group("open") is not None:
            depth += 1
        elif m.group("close") is not None:
            depth = max(0, depth - 1)
        elif depth:
            continue
        elif m.group("move") is not None:
            evals.append(PlyEval(None, None, None, _GLYPHS.get(m.group("glyph"))))
        elif m.group("nag") is not None and evals and m.group("nag") in _NAGS:
            evals[-1] = evals[-1]._replace(judgment=_NAGS[m.group("nag")])
        elif m.group("comment") is not None and evals:
            found |= _read_eval(m.group("comment"), evals)
    return found


def _read_eval(comment: str, evals: list[PlyEval]) -> bool:
    """Set the last ply's eval from a comment's ``[%eval …]``; True when it had one."""
    e = _EVAL.search(comment)
    if e is None:
        return False
    mate, pawns = e.group("mate"), e.group("pawns")
    if len((mate or pawns).split(".")[0].lstrip("+-")) > _MAX_DIGITS:
        too_far = _MAX_EVAL + 1  # out of range: dropped by pgn_analysis
        evals[-1] = evals[-1]._replace(cp=None if mate else too_far, mate=too_far if mate else None)
    elif mate is not None:
        evals[-1] = evals[-1]._replace(cp=None, mate=int(mate))
    else:
        evals[-1] = evals[-1]._replace(cp=round(float(pawns) * 100), mate=None)
    return True
