"""The replay report's pass over a player's games of a perf, computed once and saved.

:func:`walk` goes over the stored rows once (see :mod:`tracker.report.replay_pass`): which games
count (the selection's reasons for the others), the counted games, the real Lichess line. That read
and walk cost about 0.5-0.8 s at 100k games, most of a first report. :func:`save_walk` saves
the result in the database (:mod:`tracker.store.snapshots`) with the database's write counter,
so the next report reads one row, until a game is written; :mod:`tracker.report.scale_runs` reads it
for a report, with each scale's replay of it, and computes both ahead right after an import
(the first Overview after an import is then as fast as the next). A saved pass is keyed on
what it depends on: the player, the perf, the selection's
``count_provisional`` and the version of the code that computes it (:data:`PASS_VERSION`), so
a changed rule never reads a pass the old rule made.
"""

from __future__ import annotations

import sys
from array import array
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import msgspec

from tracker.core import collector
from tracker.core.utc import now_ms
from tracker.fide import CountedGame
from tracker.report.lichess_line import MsLine
from tracker.report.replay_pass import MonthOf, RowView
from tracker.report.selection import FUTURE, exclusion_reason, score_halves
from tracker.store import queries, snapshots
from tracker.store.db import Store

#: The version of a saved pass: bump it whenever what :func:`walk` computes or :func:`encode`
#: writes changes (the selection's rules, the Lichess line, the row view, the replay read's
#: columns, the encoding). A pass saved under another version is never read; a test pins
#: the pass computed on a fixture to this version (tests/test_cache_versions.py), so a change
#: that forgets the bump fails there.
PASS_VERSION: Final = 1

#: The pass's version as the results built on a pass (the scales' replays, the group
#: summaries) hold it in their options: a new pass version never reads one of them either.
CODE_PRINT: Final = f"v{PASS_VERSION}"


def _ints(code: str) -> array[int]:
    return array(code)


@dataclass
class Pass:
    """What one pass over a player's stored rows of a perf collects, held compactly (a million
    games in ~80 MB: the counted games as three arrays, not a million objects).

    ``rows``: the rows read (the player's games of the perf); ``games``: those the player
    played (all of them, the rows being theirs); ``periods``: the months with games, in order;
    the counted games, in end order: ``counted_at`` (the index of their month in
    ``periods``), ``counted_opponents`` (the opponent's rating, rating points) and
    ``counted_halves`` (the score in half points), read as :class:`CountedGame` by
    :meth:`counted`; ``excluded``: per month, reason → games left out; ``line``: the real
    Lichess line; ``name``: the player's name as Lichess writes it.
    """

    counted_at: array[int] = field(default_factory=lambda: _ints("i"))
    counted_opponents: array[int] = field(default_factory=lambda: _ints("i"))
    counted_halves: array[int] = field(default_factory=lambda: _ints("b"))
    excluded: dict[str, Counter[str]] = field(default_factory=dict)
    periods: list[str] = field(default_factory=list)
    line: MsLine = field(default_factory=MsLine)
    games: int = 0
    name: str | None = None
    rows: int = 0
    monthly: dict[str, int] | None = None

    def counted(self) -> Iterator[CountedGame]:
        """The counted games, one :class:`CountedGame` at a time, in end order."""
        return map(CountedGame, self.counted_periods(), self.counted_opponents,
                   self.counted_halves)

    def counted_periods(self) -> list[str]:
        """The period of each counted game, in end order (one list shared by every scale's
        replay of the pass: the month labels are the periods' own strings)."""
        periods = self.periods
        return [periods[i] for i in self.counted_at]

    def dated_in_future(self) -> bool:
        """Whether a game was left out as dated in the future (the pass changes with time)."""
        return any(FUTURE in reasons for reasons in self.excluded.values())

    def monthly_last(self) -> dict[str, int]:
        """The line's last rating in each month (``"YYYY-MM"`` → rating points)."""
        if self.monthly is None:
            self.monthly = self.line.monthly_last()
        return self.monthly


def walk(rows: Iterable[Sequence[Any]], uid: str, *, count_provisional: bool,
         now: int | None = None) -> Pass:
    """One pass over plain rows (see :mod:`tracker.report.replay_pass`): the selection's reasons,
    the counted games and the Lichess line, without building a record per game. Rows come in end
    order, so the periods come in order too. ``now`` (ms UTC, default now): a game that ends
    after it is left out as dated in the future (see :func:`_left_out_as_future`)."""
    at = now_ms() if now is None else now
    seen = Pass()
    view, month = RowView(), MonthOf()
    white, black = view.white, view.black
    periods, excluded, add_point = seen.periods, seen.excluded, seen.line.add
    add_at, add_opponent, add_halves = (seen.counted_at.append, seen.counted_opponents.append,
                                        seen.counted_halves.append)
    period = ""
    name: str | None = None
    games = read = 0
    for row in rows:
        read += 1
        view.load(row)
        color = view.color_of(uid)
        if color is None:
            continue
        games += 1
        me, opp = (white, black) if color == "white" else (black, white)
        if name is None and me.name:
            name = me.name
        if view.ended_ms > at:  # rows in end order: every later game is in the future too
            _left_out_as_future(seen, month(view.ended_ms))
            continue
        if month(view.ended_ms) != period:
            period = month(view.ended_ms)
            periods.append(period)
        reason = exclusion_reason(view, color, count_provisional=count_provisional)
        if reason is None:
            # exclusion_reason() let it through: a finished game against a rated opponent.
            halves = score_halves(view.result, color)
            assert opp.rating is not None and halves is not None
            add_at(len(periods) - 1)
            add_opponent(opp.rating)
            add_halves(halves)
        elif period in excluded:
            excluded[period][reason] += 1
        else:
            excluded[period] = Counter((reason,))
        add_point(view.id, view.created_ms, view.ended_ms, view.rated, me.rating, me.rating_diff)
    seen.games, seen.name, seen.rows = games, name, read
    return seen


def _left_out_as_future(seen: Pass, its_month: str) -> None:
    """Count a game dated in the future (``its_month`` ``"YYYY-MM"``) as left out, under the
    last period with games (its own month when there is none): it makes no period of its own
    and no point of the Lichess line, so the replay and "now" stay those of the games
    played."""
    if not seen.periods:
        seen.periods.append(its_month)
    seen.excluded.setdefault(seen.periods[-1], Counter())[FUTURE] += 1


class _Saved(msgspec.Struct, array_like=True):
    """A pass as saved: the counted games and the Lichess line's numbers as arrays' bytes
    (little-endian), the game ids as one text."""

    rows: int
    games: int
    name: str | None
    periods: list[str]
    counted_at: bytes
    counted_opponents: bytes
    counted_halves: bytes
    excluded: list[tuple[str, list[tuple[str, int]]]]
    ends: bytes
    ids: bytes
    ratings: bytes
    monthly: list[tuple[str, int]]


_DECODER: Final = msgspec.msgpack.Decoder(_Saved)
_BIG_ENDIAN: Final = sys.byteorder == "big"


def array_bytes(a: array[int]) -> bytes:
    """An array's bytes, little-endian on any machine (a database moves between machines)."""
    if _BIG_ENDIAN:
        a = array(a.typecode, a)
        a.byteswap()
    return a.tobytes()


def bytes_array(code: str, data: bytes) -> array[int]:
    """The array :func:`array_bytes` made (ValueError: bytes that do not fit ``code``)."""
    a = array(code)
    a.frombytes(data)
    if _BIG_ENDIAN:
        a.byteswap()
    return a


def encode(seen: Pass) -> bytes:
    """A pass as bytes (msgpack, see :class:`_Saved`)."""
    line = seen.line
    return msgspec.msgpack.encode(_Saved(
        seen.rows, seen.games, seen.name, seen.periods, array_bytes(seen.counted_at),
        array_bytes(seen.counted_opponents), array_bytes(seen.counted_halves),
        [(p, list(c.items())) for p, c in seen.excluded.items()],
        array_bytes(line.ends), line.ids, array_bytes(line.ratings),
        list(seen.monthly_last().items()),
    ))


def decode(payload: bytes) -> Pass | None:
    """The pass :func:`encode` made, ``None`` for bytes it did not make."""
    try:
        with collector.paused():
            return _decoded(_DECODER.decode(payload))
    except (msgspec.DecodeError, ValueError, IndexError):
        return None


def _decoded(saved: _Saved) -> Pass:
    """A :class:`Pass` from its saved columns (ValueError, IndexError: columns that do not
    fit)."""
    seen = Pass(
        counted_at=bytes_array("i", saved.counted_at),
        counted_opponents=bytes_array("i", saved.counted_opponents),
        counted_halves=bytes_array("b", saved.counted_halves),
        excluded={p: Counter(dict(c)) for p, c in saved.excluded}, periods=saved.periods,
        line=MsLine(bytes_array("q", saved.ends), saved.ids, bytes_array("i", saved.ratings)),
        games=saved.games, name=saved.name, rows=saved.rows, monthly=dict(saved.monthly))
    n = len(seen.counted_at)
    if not n == len(seen.counted_opponents) == len(seen.counted_halves) or (
            n and not 0 <= min(seen.counted_at) <= max(seen.counted_at) < len(seen.periods)):
        raise ValueError("counted games that do not fit the periods")
    return seen


def _options(count_provisional: bool) -> snapshots.Key:
    return snapshots.Key(snapshots.PASS, f"p{int(count_provisional)}", PASS_VERSION)


def describe(options: str, version: int) -> str:
    """A saved pass's options in words: ``"p0"`` → ``"provisional opponents not counted"``,
    with ``", version N, outdated"`` when ``version`` is not :data:`PASS_VERSION` (it is
    never read)."""
    words = {"p0": "provisional opponents not counted",
             "p1": "provisional opponents counted"}.get(options, options)
    return words if version == PASS_VERSION else f"{words}, version {version}, outdated"


#: The key of a saved pass beside the keys of its saved replays (public name).
options = _options


def compute(store: Store, uid: str, perf: str, *, count_provisional: bool,
            seq: int | None = None) -> Pass:
    """The pass over the stored games, saved for the next report. ``seq``: the write counter,
    read before the games (read here when not given)."""
    if seq is None:
        seq = snapshots.write_seq(store)
    with collector.paused():
        rows = queries.replay_rows(store, uid, perf)
        return save_walk(store, seq, rows, uid, perf, count_provisional=count_provisional)


def save_walk(store: Store, seq: int, rows: Iterable[Sequence[Any]], uid: str, perf: str, *,
              count_provisional: bool) -> Pass:
    """The pass over ``rows``, saved with ``seq``: the write counter read *before* the rows
    (a write in between leaves the saved pass stale, never wrong)."""
    seen = walk(rows, uid, count_provisional=count_provisional)
    if not seen.dated_in_future():  # such a game counts once its date is past: not saved
        snapshots.save_pass(store, uid, perf, _options(count_provisional), seq, encode(seen))
    return seen


def player_pass(store: Store, uid: str, perf: str, *, count_provisional: bool) -> Pass:
    """The pass alone (no scale's replay, see :mod:`tracker.report.scale_runs` for a report's): the
    saved one while no game was written since, else :func:`compute`. ``uid``: the player's
    lowercase Lichess id."""
    saved = snapshots.saved_pass(store, uid, perf, _options(count_provisional))
    if saved.payload is not None:
        seen = decode(saved.payload)
        if seen is not None:
            return seen
    return compute(store, uid, perf, count_provisional=count_provisional, seq=saved.write_seq)
