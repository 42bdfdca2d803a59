"""The sync plan of a Lichess import: pure (no I/O), from a cursor to the downloads, and back.

An incremental import remembers, per player and perf filter, a :class:`Cursor`: how far the
games are known to be stored. :func:`plan_sync` turns it into the downloads (:class:`Segment`)
of one sync; :func:`advance_cursor` turns what the downloads brought (:class:`SegmentResult`)
into the next cursor. Both are plain functions of their arguments.

Times are integer milliseconds since the epoch, UTC. Lichess filters ``since``/``until`` on
``createdAt`` — on ``lastMoveAt``, for window *and* order, as soon as ``perfType`` (or
``rated``, ``color``, ``analysed``) is given, because it then answers from its search index. A
sync with a perf filter therefore counts in ``lastMoveAt``, one without in ``createdAt``; each
has its cursor.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Final

from tracker.core.cursor import Cursor

DAY_MS: Final = 86_400_000
#: Incremental syncs with a perf filter count in ``lastMoveAt`` on Lichess's search index,
#: which is fed a little after a game ends: re-read this much before the newest stored game.
SEARCH_INDEX_LAG_MS: Final = 10 * 60 * 1000
#: The correspondence pass re-reads games that ended this long before the last sync (the
#: search index's lag, and clocks that disagree), deduplicated by id.
CORRESPONDENCE_OVERLAP_MS: Final = DAY_MS


@dataclass(frozen=True, slots=True)
class Segment:
    """One download of a sync: ``[since_ms, until_ms)`` (``None``: open), newest first.

    ``kind``: ``all`` (first or full sync), ``gap`` (what an unfinished run left), ``new``
    (games since the cursor), ``correspondence`` (games of that perf that ended since the last
    sync). ``stored_to_ms``: once the earlier segments are done, every game up to this time is
    stored (the base a ``new`` segment extends). With ``perf_type`` the times are
    ``lastMoveAt`` (Lichess's search index), else ``createdAt``.
    """

    kind: str
    since_ms: int | None
    until_ms: int | None
    perf_type: str | None = None
    ongoing: bool = False
    stored_to_ms: int | None = None

    @property
    def by_last_move(self) -> bool:
        return self.perf_type is not None

    def params(self) -> dict[str, Any]:
        return {k: v for k, v in (("since", self.since_ms), ("until", self.until_ms),
                                  ("perfType", self.perf_type),
                                  ("ongoing", self.ongoing or None)) if v is not None}


@dataclass(slots=True)
class SegmentResult:
    """How a segment went. Times in the segment's time key (ms); ``oldest_ongoing_ms`` is the
    ``createdAt`` of the oldest real-time game still being played."""

    complete: bool = False
    message: str | None = None
    games: int = 0
    newest_ms: int | None = None
    oldest_ms: int | None = None
    oldest_ongoing_ms: int | None = None


def _after(stored_to: int | None, floor: int | None, by_last_move: bool) -> int | None:
    """The first time still to ask for when every game up to ``stored_to`` is stored."""
    if stored_to is None:
        return floor
    start = stored_to - SEARCH_INDEX_LAG_MS if by_last_move else stored_to + 1
    return start if floor is None else max(start, floor)


def plan_sync(cursor: Cursor | None, *, perfs: Sequence[str] = (), floor_ms: int | None = None,
              full: bool = False) -> list[Segment]:
    """The downloads of one sync, in order.

    - No cursor (first sync) or ``full``: everything since ``floor_ms`` (``--since``).
    - Else, first the gap an unfinished run left (``(newest, resume_until]``), then the games
      after the newest one the API runs are known to have stored: after a gap, the newest the
      unfinished run received (the cursor's ``resume_top``; ``resume_until`` when unknown),
      the cursor's ``newest`` otherwise. Never the newest game in the store: a game from a
      file (or one dated in the future) says nothing of what the API has sent.
      In ``createdAt`` the window starts 1 ms after it: the cursor already stands before any
      game that was still being played (see :func:`advance_cursor`), so nothing finished since
      can be older. In ``lastMoveAt`` it starts :data:`SEARCH_INDEX_LAG_MS` before it.
    - Then, without a perf filter, the **correspondence pass**: correspondence games that ended
      since the last sync (``perfType=correspondence``, hence ``lastMoveAt``), whatever their
      ``createdAt``. A correspondence game can run for months: waiting for it with the
      ``createdAt`` window would re-download every game since it started on every sync, while
      this pass costs one request that usually returns nothing.

    ``floor_ms`` bounds every window from below.
    """
    perf_type = ",".join(perfs) or None
    by_last_move = perf_type is not None
    ongoing = not by_last_move  # the search index holds finished games only
    if full or cursor is None:
        return [Segment("all", floor_ms, None, perf_type, ongoing)]
    segments: list[Segment] = []
    stored_to = cursor.newest_ms
    if cursor.resume_until_ms is not None:
        segments.append(Segment("gap", _after(cursor.newest_ms, floor_ms, by_last_move),
                                cursor.resume_until_ms + 1, perf_type, ongoing))
        stored_to = (cursor.resume_top_ms if cursor.resume_top_ms is not None
                     else cursor.resume_until_ms)
    segments.append(Segment("new", _after(stored_to, floor_ms, by_last_move), None, perf_type,
                            ongoing, stored_to_ms=stored_to))
    if not by_last_move and cursor.last_sync_at_ms is not None:
        since = cursor.last_sync_at_ms - CORRESPONDENCE_OVERLAP_MS
        segments.append(Segment("correspondence", since if floor_ms is None else
                                max(since, floor_ms), None, "correspondence", False))
    return segments


def beyond(cursor: Cursor, now_ms: int) -> bool:
    """True when one of ``cursor``'s times is after ``now_ms``: no download can have stored a
    game there, so the cursor is wrong (older trackers moved it to the newest game in the
    store, a file's game dated in the future included) and the sync starts afresh."""
    return any(t is not None and t > now_ms for t in
               (cursor.newest_ms, cursor.resume_until_ms, cursor.resume_top_ms))


def _max(a: int | None, b: int | None) -> int | None:
    return b if a is None else a if b is None else max(a, b)


def _capped(value: int | None, limit: int | None) -> int | None:
    """``value``, at most ``limit`` (``None`` stays ``None``: no time known)."""
    return value if value is None or limit is None else min(value, limit)


def _received_to(res: SegmentResult, started_ms: int) -> int | None:
    """The newest time up to which a segment's games are stored: its newest finished game,
    never past a real-time game still being played (1 ms before the oldest one) nor past the
    sync's start (a game dated in the future, by a server's clock or a bad value)."""
    top = _capped(res.newest_ms, started_ms)
    if res.oldest_ongoing_ms is not None:
        top = res.oldest_ongoing_ms - 1 if top is None else min(top, res.oldest_ongoing_ms - 1)
    return top


def _after_segment(cur: Cursor | None, seg: Segment, res: SegmentResult, started_ms: int,
                   floor_ms: int | None) -> Cursor | None:
    last_sync = cur.last_sync_at_ms if cur else None
    if seg.kind in ("all", "new"):
        base = seg.stored_to_ms if seg.kind == "new" else (
            floor_ms - 1 if floor_ms is not None else None)
        if res.complete:
            newest = _max(base, _capped(res.newest_ms, started_ms))
            if res.oldest_ongoing_ms is not None:
                limit = res.oldest_ongoing_ms - 1
                newest = limit if newest is None else min(newest, limit)
            return Cursor(newest, None, last_sync)
        if res.oldest_ms is not None:
            return Cursor(base, res.oldest_ms, last_sync, _received_to(res, started_ms))
        return Cursor(base, None, last_sync) if seg.kind == "new" else cur
    if seg.kind == "gap" and cur is not None:
        if res.complete:
            return Cursor(cur.newest_ms, None, last_sync)
        if res.oldest_ms is not None:
            return replace(cur, resume_until_ms=min(res.oldest_ms, cur.resume_until_ms or
                                                    res.oldest_ms))
    return cur


def advance_cursor(old: Cursor | None, plan: Sequence[Segment],
                   results: Sequence[SegmentResult], *, started_ms: int,
                   floor_ms: int | None = None) -> Cursor | None:
    """The cursor after a sync that ran ``plan`` with ``results`` (shorter when it stopped).

    ``newest_ms``: every game up to this time is stored (``createdAt`` or ``lastMoveAt``, as the
    filter's windows count). It never passes a real-time game that was still being played: it
    stays 1 ms before the oldest one's ``createdAt``, so the game is asked for again once it has
    ended; nor the sync's start (``started_ms``). ``resume_until_ms``: an unfinished run stored
    the games down to this time but not those between ``newest_ms`` and it;
    ``resume_top_ms``: the newest time up to which that run stored them, where the next sync
    goes on once the gap is filled. Only what the downloads received moves the cursor, never
    the games in the store. ``last_sync_at_ms``: the start of the last sync that completed,
    where the next correspondence pass looks back from.
    """
    cur = old
    for seg, res in zip(plan, results, strict=False):
        cur = _after_segment(cur, seg, res, started_ms, floor_ms)
    if cur is not None and len(results) == len(plan) and all(r.complete for r in results):
        cur = replace(cur, last_sync_at_ms=started_ms)
    return cur
