"""One ply's evaluation, as Lichess exports it (NDJSON ``analysis[]``, PGN ``[%eval …]``).

Pure data; the sources parse into it, the store keeps it, :mod:`tracker.analysis.formulas`
reads it. White's point of view throughout.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal, NamedTuple

#: A side: the players' colours as Lichess spells them.
Color = Literal["white", "black"]

#: A judgment's name as Lichess exports it (``analysis[].judgment.name``).
Judgment = Literal["Inaccuracy", "Mistake", "Blunder"]

JUDGMENTS: tuple[Judgment, ...] = ("Inaccuracy", "Mistake", "Blunder")


class PlyEval(NamedTuple):
    """One ply's evaluation after the move, White's view (Lichess analysis[] entry)."""

    cp: int | None  # centipawns; None with mate or where the ply has no eval
    mate: int | None  # moves to mate, + White mates, - Black mates
    best: str | None = None  # engine's preferred move (UCI) where the source gives it
    judgment: str | None = None  # "Inaccuracy" | "Mistake" | "Blunder" as exported

    @property
    def known(self) -> bool:
        """Whether the ply has an eval (a centipawn value or a mate)."""
        return self.cp is not None or self.mate is not None


#: The eval Lichess assumes before the first move: 15 cp for White.
START = PlyEval(15, None)


def from_lichess_entry(entry: Mapping[str, object]) -> PlyEval:
    """One entry of a Lichess NDJSON ``analysis[]`` → :class:`PlyEval`.

    ``{"eval": -76, "best": "f1e1", "judgment": {"name": "Inaccuracy", …}}`` →
    ``PlyEval(-76, None, "f1e1", "Inaccuracy")``; ``{}`` (no eval: the checkmated final
    position) → ``PlyEval(None, None)``. Raises ValueError for a value of the wrong type.
    """
    cp, mate, best, judgment = entry.get("eval"), entry.get("mate"), entry.get("best"), None
    raw = entry.get("judgment")
    if isinstance(raw, Mapping):
        name = raw.get("name")
        if name is not None and name not in JUDGMENTS:
            raise ValueError(f"unknown judgment {name!r}")
        judgment = name
    if not (cp is None or (isinstance(cp, int) and not isinstance(cp, bool))):
        raise ValueError(f"eval must be an integer (centipawns), got {cp!r}")
    if not (mate is None or (isinstance(mate, int) and not isinstance(mate, bool))):
        raise ValueError(f"mate must be an integer (moves), got {mate!r}")
    if not (best is None or isinstance(best, str)):
        raise ValueError(f"best must be a UCI move, got {best!r}")
    return PlyEval(cp, mate, best, judgment if isinstance(judgment, str) else None)
