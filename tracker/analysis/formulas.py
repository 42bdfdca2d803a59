"""Lichess's per-game numbers from the evals: Win%, accuracy, ACPL, judgments (STRENGTH.md §2).

Pure (no I/O). Floats, as Lichess computes them (lila ``modules/analyse``
``AccuracyPercent.scala``, scalachess ``eval.scala``, lila ``modules/tree`` ``Advice.scala``);
the results equal Lichess's (``docs/strength.md``). ``evals`` is always one
:class:`~tracker.core.evals.PlyEval` per ply, after the move, White's view;
``white_first=False`` for a game that starts with Black to move.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import Final, NamedTuple

from tracker.core.evals import START, Judgment, PlyEval

#: |cp| above this counts as this much (lila ``Eval.Cp.CEILING``).
CEILING: Final = 1000
#: The slope of Lichess's winning-chances curve (scalachess ``eval.scala``).
WC_SLOPE: Final = 0.00368208
#: Move accuracy = clamp(A · exp(−K · d) + B + 1, 0, 100), d = Win% lost (lila
#: ``AccuracyPercent.fromWinPercents``; the "+1" is Lichess's bonus for imperfect analysis).
ACC_A: Final = 103.1668100711649
ACC_K: Final = 0.04354415386753951
ACC_B: Final = -3.166924740191411
#: A drop in the mover's winning chances of at least this much is the judgment (lila
#: ``Advice.scala``), largest first.
WC_JUDGMENTS: Final[tuple[tuple[float, Judgment], ...]] = (
    (0.3, "Blunder"), (0.2, "Mistake"), (0.1, "Inaccuracy"))


class JudgmentCounts(NamedTuple):
    """One player's inaccuracies, mistakes and blunders in one game."""

    inaccuracy: int
    mistake: int
    blunder: int


class PlayerSummary(NamedTuple):
    """One player's numbers for one game, as Lichess shows them.

    ``accuracy``: game accuracy in % rounded half up (``None`` without a scored move);
    ``acpl``: average centipawn loss rounded half up (``None`` without a scored move);
    the counts: the exported judgments of the player's moves (a local analysis fills
    ``PlyEval.judgment`` with :func:`judge` where its engine preferred another move);
    ``computed``: the evals carried no judgment at all (a PGN with ``[%eval]`` but no glyphs),
    so the counts are :func:`recomputed_judgments` by Lichess's thresholds, which may flag more
    moves than Lichess (an upper bound), never a false 0.
    """

    accuracy: int | None
    acpl: int | None
    inaccuracy: int
    mistake: int
    blunder: int
    computed: bool = False


class GameSummary(NamedTuple):
    """Both players' :class:`PlayerSummary`."""

    white: PlayerSummary
    black: PlayerSummary


def ceiled_cp(ev: PlyEval, *, white_to_move: bool | None = None) -> int | None:
    """The eval in centipawns, White's view, clamped to ±1000; a mate counts ±1000 by its
    sign; ``None`` for a ply without eval. Mate 0 (the side to move is mated) counts against
    the side to move: pass ``white_to_move`` (ValueError without it)."""
    if ev.cp is not None:
        return max(-CEILING, min(CEILING, ev.cp))
    if ev.mate is None:
        return None
    if ev.mate == 0:
        if white_to_move is None:
            raise ValueError("mate 0 needs the side to move")
        return -CEILING if white_to_move else CEILING
    return CEILING if ev.mate > 0 else -CEILING


def winning_chances(cp: float) -> float:
    """``clamp(2 / (1 + exp(−0.00368208 · cp)) − 1, −1, 1)``: −1 … 1."""
    return max(-1.0, min(1.0, 2 / (1 + math.exp(-WC_SLOPE * cp)) - 1))


def win_percent(ev: PlyEval, *, white_to_move: bool | None = None) -> float | None:
    """Win% (0–100) for White of the ceiled eval: ``50 + 50 · wc(ceiled cp)``; ``None``
    without eval. ``white_to_move`` as for :func:`ceiled_cp` (needed for mate 0 only)."""
    cp = ceiled_cp(ev, white_to_move=white_to_move)
    return None if cp is None else 50 + 50 * winning_chances(cp)


def move_accuracy(win_before: float, win_after: float) -> float:
    """Accuracy (0–100) of a move from the mover's Win% before and after it: 100 when the
    move lost nothing, else ``clamp(103.17 · exp(−0.0435 · loss) − 3.17 + 1, 0, 100)``."""
    if win_after >= win_before:
        return 100.0
    raw = ACC_A * math.exp(-ACC_K * (win_before - win_after)) + ACC_B + 1
    return max(0.0, min(100.0, raw))


def _movers(n: int, white_first: bool) -> Iterator[bool]:
    """Whether White made each of ``n`` plies."""
    return ((i % 2 == 0) == white_first for i in range(n))


def _pstdev(xs: Sequence[float]) -> float:
    mean = sum(xs) / len(xs)
    return math.sqrt(sum((x - mean) ** 2 for x in xs) / len(xs))


def game_accuracy(evals: Sequence[PlyEval], *,
                  white_first: bool = True) -> tuple[float | None, float | None]:
    """(White, Black) game accuracy in %, unrounded (lila ``AccuracyPercent.gameAccuracy``).

    Plies without an eval are left out first (as Lichess does); Win% of 15 cp, then one per
    eval; per move a volatility weight (population std dev of a window of Win%, clamped to
    0.5–12); per colour the mean of the weighted mean and the harmonic mean of the move
    accuracies. ``(None, None)`` unless both colours have a move (as Lichess).
    """
    wp: list[float] = [50 + 50 * winning_chances(START.cp or 0)]
    for i, ev in enumerate(evals):
        cp = ceiled_cp(ev, white_to_move=(i % 2 == 1) == white_first)
        if cp is not None:
            wp.append(50 + 50 * winning_chances(cp))
    n = len(wp) - 1
    ws = max(2, min(8, n // 10))
    windows = [wp[:ws]] * (min(ws, len(wp)) - 2)
    windows += [wp[i:i + ws] for i in range(len(wp) - ws + 1)] if len(wp) >= ws else [wp]
    weighted: dict[bool, list[tuple[float, float]]] = {True: [], False: []}
    for i, white in zip(range(n), _movers(n, white_first), strict=True):
        before, after = (wp[i], wp[i + 1]) if white else (100 - wp[i], 100 - wp[i + 1])
        weight = max(0.5, min(12.0, _pstdev(windows[i])))
        weighted[white].append((move_accuracy(before, after), weight))

    def colour(moves: list[tuple[float, float]]) -> float | None:
        total = sum(w for _, w in moves)
        if not moves or total == 0:
            return None
        mean = sum(a * w for a, w in moves) / total
        harmonic = len(moves) / sum(1 / max(1.0, a) for a, _ in moves)
        return (mean + harmonic) / 2

    white_acc, black_acc = colour(weighted[True]), colour(weighted[False])
    if white_acc is None or black_acc is None:
        return None, None
    return white_acc, black_acc


def round_half_up(x: float) -> int:
    """``x`` rounded to the nearest integer, halves up (Java ``Math.round``)."""
    return math.floor(x + 0.5)


def _pairs(evals: Sequence[PlyEval], white: bool,
           white_first: bool) -> Iterator[tuple[int, PlyEval, PlyEval]]:
    """(ply, before, after) of each move of one colour; ply is 1-based; the first move's
    before is 15 cp (lila ``AccuracyCP.diffsList``: complete pairs only)."""
    seq = [START, *evals] if white == white_first else list(evals)
    offset = 0 if white == white_first else 1
    for k in range(0, len(seq) - 1, 2):
        yield k + 1 + offset, seq[k], seq[k + 1]


def _cp_losses(evals: Sequence[PlyEval], white: bool, white_first: bool) -> list[int]:
    losses: list[int] = []
    for _, before, after in _pairs(evals, white, white_first):
        # the position before the move has the mover to move; after, the opponent
        b = ceiled_cp(before, white_to_move=white)
        a = ceiled_cp(after, white_to_move=not white)
        if a is not None and b is not None:
            losses.append(max(0, (b - a) if white else (a - b)))
    return losses


def acpl(evals: Sequence[PlyEval], *, white_first: bool = True) -> tuple[int | None, int | None]:
    """(White, Black) average centipawn loss rounded half up, ``None`` without a scored move
    (lila ``AccuracyCP.mean``): per move, the drop of the ceiled eval from the mover's view
    (never below 0), a mate counting ±1000, pairs with a missing eval skipped, 15 cp before
    the first move."""
    out: list[int | None] = []
    for white in (True, False):
        losses = _cp_losses(evals, white, white_first)
        out.append(round_half_up(sum(losses) / len(losses)) if losses else None)
    return out[0], out[1]


def judge(before: PlyEval, after: PlyEval, *, white_moved: bool) -> Judgment | None:
    """Lichess's judgment of a move from the evals before and after it (``Advice.scala``),
    without the "engine preferred another move" condition: the caller applies it.

    Both cp: the drop of the mover's winning chances (cp not ceiled) ≥ 0.3 Blunder, ≥ 0.2
    Mistake, ≥ 0.1 Inaccuracy. Mates, mover's view: no mate → the opponent mates ("Checkmate
    is now unavoidable") Inaccuracy if the cp before was < −999, Mistake if < −700, else
    Blunder; the mover mated → no mate ("Lost forced checkmate sequence") Inaccuracy if the cp
    after is > 999, Mistake if > 700, else Blunder; the mover mated → the opponent mates:
    Blunder. A missing cp counts 0.
    """
    sign = 1 if white_moved else -1
    if before.cp is not None and after.cp is not None:
        delta = sign * (winning_chances(before.cp) - winning_chances(after.cp))
        return next((name for at_least, name in WC_JUDGMENTS if delta >= at_least), None)
    prev_mate = None if before.mate is None else sign * before.mate
    next_mate = None if after.mate is None else sign * after.mate
    prev_cp = sign * (before.cp or 0)
    next_cp = sign * (after.cp or 0)
    if prev_mate is None and next_mate is not None and next_mate < 0:  # mate created
        return "Inaccuracy" if prev_cp < -999 else "Mistake" if prev_cp < -700 else "Blunder"
    if prev_mate is not None and prev_mate > 0:
        if next_mate is None:  # mate lost
            return "Inaccuracy" if next_cp > 999 else "Mistake" if next_cp > 700 else "Blunder"
        if next_mate < 0:
            return "Blunder"
    return None


def _count(names: Iterator[str | None]) -> JudgmentCounts:
    listed = list(names)
    return JudgmentCounts(listed.count("Inaccuracy"), listed.count("Mistake"),
                          listed.count("Blunder"))


def recomputed_judgments(evals: Sequence[PlyEval], *,
                         white_first: bool = True) -> tuple[JudgmentCounts, JudgmentCounts]:
    """(White, Black) counts of :func:`judge` over every move (no engine-best condition: it
    also flags moves the engine itself played, so it differs from Lichess's counts)."""
    white, black = (_count(judge(b, a, white_moved=w) for _, b, a in _pairs(evals, w, white_first))
                    for w in (True, False))
    return white, black


def exported_judgments(evals: Sequence[PlyEval], *,
                       white_first: bool = True) -> tuple[JudgmentCounts, JudgmentCounts]:
    """(White, Black) counts of the judgments the evals carry (``PlyEval.judgment``): Lichess's
    per-player counts."""
    movers = list(_movers(len(evals), white_first))
    white, black = (_count(ev.judgment for ev, m in zip(evals, movers, strict=True) if m == w)
                    for w in (True, False))
    return white, black


def carries_judgments(evals: Sequence[PlyEval]) -> bool:
    """Whether an analysis carries its judgments: any ply with a judgment or a ``best`` move
    (Lichess's NDJSON, a PGN with glyphs, a local analysis). Without, zero exported judgments
    says nothing."""
    return any(e.judgment is not None or e.best is not None for e in evals)


def game_summary(evals: Sequence[PlyEval], *, white_first: bool = True) -> GameSummary:
    """Accuracy, ACPL and the judgment counts of both players: the exported ones, or, where
    the evals carry none (:func:`carries_judgments`), the ones recomputed from the evals by
    Lichess's thresholds, marked ``computed``."""
    accuracy = game_accuracy(evals, white_first=white_first)
    losses = acpl(evals, white_first=white_first)
    computed = bool(evals) and not carries_judgments(evals)
    counts = (recomputed_judgments if computed else exported_judgments)(
        evals, white_first=white_first)
    white, black = (
        PlayerSummary(None if acc is None else round_half_up(acc), cpl, *c, computed)
        for acc, cpl, c in zip(accuracy, losses, counts, strict=True))
    return GameSummary(white, black)
