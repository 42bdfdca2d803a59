"""The replay of a pass on each scale, saved beside the pass: the answer under every model.

A report is the pass over the player's games (:mod:`tracker.report.saved_pass`: which games count,
the Lichess line) replayed by the engine on one or more scales: the raw Lichess numbers, or
each model of ``--scale all`` with every opponent mapped through it. At 100k games a scale's
replay costs ~0.1-0.2 s, so the default (every model covering the perf, their median) would
cost two or three times a single scale on every first report. Here each scale's replay is
saved like the pass, in the same table, keyed on everything it depends on (the model, the
replay settings, the code of the pass, of this module and of the engine: :func:`run_options`),
with the write counter of the pass it replays: never read once a game was written after it,
only recomputed. :func:`report_replays` reads the pass and every scale's replay in one query;
:func:`refresh` computes them ahead, right after an import, for the scales a first report
reads (the player's saved scale: with ``all``, every model covering the perf). The median
of a band is computed from the saved replays (a few dozen periods), not saved.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from itertools import compress, groupby
from operator import itemgetter
from typing import Final

import msgspec

from tracker.core import collector
from tracker.core.perfs import PerfError, perf_key
from tracker.fide import CountedGame, PeriodResult, replay
from tracker.fide.scale import MODELS, ScaleModel, convert, models_for
from tracker.fide.scale import model as scale_model
from tracker.report.saved_pass import CODE_PRINT, Pass, decode, options, save_walk
from tracker.report.settings import (
    ALL_MODELS,
    LICHESS_SCALE,
    ResolvedSettings,
    get_settings,
    validate_settings,
)
from tracker.store import queries, snapshots
from tracker.store.db import Store
from tracker.store.games import WrittenGames


@dataclass(frozen=True, slots=True)
class OnScale:
    """One replay of the counted games on one scale (``model`` ``None``: the Lichess scale):
    the engine's periods, the counted games left out per period because the model cannot
    place the opponent, the start rating the engine used (mapped to the model's scale)."""

    results: list[PeriodResult]
    below: dict[str, int]
    start_rating: int | None


def replay_on(model: ScaleModel | None, perf: str, seen: Pass, months: list[str],
              settings: ResolvedSettings, labels: list[str] | None = None) -> OnScale:
    """Map every opponent through ``model`` (per ``perf``), then run the engine. An opponent
    the model cannot place is left out, counted per period. ``labels``: the pass's
    :meth:`~tracker.report.saved_pass.Pass.counted_periods`, shared between the scales of a report
    (computed here when not given). Each distinct rating is converted once, and nothing is
    built per game but the engine's :class:`CountedGame`."""
    if labels is None:
        labels = seen.counted_periods()
    opponents, halves = seen.counted_opponents, seen.counted_halves
    if model is None:
        games = map(CountedGame, labels, opponents, halves)
        return OnScale(replay(games, settings.engine(), periods=months), {}, None)
    table = {x: convert(model, perf, x).rating for x in set(opponents)}
    below: dict[str, int] = {}
    if None in table.values():
        keep = [table[x] is not None for x in opponents]
        below = dict(Counter(compress(labels, [not k for k in keep])))
        placed = [r for x in opponents if (r := table[x]) is not None]
        games = map(CountedGame, compress(labels, keep), placed, compress(halves, keep))
    else:
        rated = {x: r for x, r in table.items() if r is not None}  # every one: typed as such
        games = map(CountedGame, labels, [rated[x] for x in opponents], halves)
    start = settings.start_rating
    if start is not None and settings.start_scale == "lichess":
        start = convert(model, perf, start).rating
    return OnScale(replay(games, settings.engine(start_rating=start), periods=months), below,
                   start)


#: The version of a scale's saved replay of a pass: bump it whenever the replay changes (the
#: engine's rules and tables, the scale models and their data, :func:`replay_on`, the
#: encoding). Pinned on a fixture by tests/test_cache_versions.py.
RUN_VERSION: Final = 1

def run_options(scale: str, settings: ResolvedSettings) -> snapshots.Key:
    """The key a replay on ``scale`` (a model key, or ``lichess``) is saved under: what it
    depends on besides the games (the settings, and its pass's version), hashed (30
    characters), under :data:`RUN_VERSION`."""
    key = repr((scale, settings.start_rating, settings.start_scale, settings.birth_year,
                settings.rules, settings.expected, settings.chapter,
                settings.count_provisional, CODE_PRINT))
    return snapshots.Key(snapshots.RUN, hashlib.sha256(key.encode()).hexdigest()[:30],
                         RUN_VERSION)


# A saved replay: its periods as rows of plain values, exact numbers as text ("F" + a
# Fraction's "n/d", "D" + a Decimal's digits), in PeriodResult's field order.
_Row = tuple[str, int, str, "str | None", "int | None", "int | None", "str | None",
             "int | None", "int | None", int, str, "int | None", int, "int | None"]


class _SavedRun(msgspec.Struct, array_like=True):
    results: list[_Row]
    below: list[tuple[str, int]]
    start_rating: int | None


_DECODER: Final = msgspec.msgpack.Decoder(_SavedRun)


def _number(x: Fraction | Decimal | None) -> str | None:
    if x is None:
        return None
    return f"F{x}" if isinstance(x, Fraction) else f"D{x}"


def _exact(text: str | None) -> Fraction | Decimal | None:
    if text is None:
        return None
    if text[:1] == "F":
        return Fraction(text[1:])
    if text[:1] == "D":
        return Decimal(text[1:])
    raise ValueError(f"not an exact number: {text!r}")


def encode_run(run: OnScale) -> bytes:
    """A replay as bytes (msgpack, exact numbers as text)."""
    rows: list[_Row] = [
        (r.period, r.games, f"F{r.score}", _number(r.expected_score), r.k, r.rating_before,
         _number(r.change), r.rating_after, r.performance, r.games_total, r.note, r.next_k,
         r.not_rated, r.unpublished)
        for r in run.results
    ]
    return msgspec.msgpack.encode(_SavedRun(rows, list(run.below.items()), run.start_rating))


def decode_run(payload: bytes | None, months: Sequence[str]) -> OnScale | None:
    """The replay :func:`encode_run` made, if it is one of ``months`` (the pass's periods);
    ``None`` for bytes it did not make."""
    if payload is None:
        return None
    try:
        saved = _DECODER.decode(payload)
        results = []
        for row in saved.results:
            score = _exact(row[2])
            if not isinstance(score, Fraction):
                return None
            results.append(PeriodResult(row[0], row[1], score, _exact(row[3]), row[4], row[5],
                                        _exact(row[6]), *row[7:]))
    except (msgspec.DecodeError, ValueError, ArithmeticError, TypeError):
        return None
    if [r.period for r in results] != list(months):
        return None
    return OnScale(results, dict(saved.below), saved.start_rating)


def _scale_key(model: ScaleModel | None) -> str:
    return LICHESS_SCALE if model is None else model.key


def _replays(store: Store, uid: str, perf: str, seen: Pass, scales: Sequence[ScaleModel | None],
             settings: ResolvedSettings, saved: dict[snapshots.Key, bytes], seq: int
             ) -> list[OnScale]:
    """Each scale's replay of ``seen``: the saved one where ``saved`` holds it, else computed
    and saved with ``seq`` (the write counter ``seen`` was computed at)."""
    months = sorted(set(seen.periods))
    labels: list[str] | None = None
    runs: list[OnScale] = []
    fresh: dict[snapshots.Key, bytes] = {}
    for m in scales:
        key = run_options(_scale_key(m), settings) if _savable(m) else None
        run = decode_run(saved.get(key), months) if key is not None else None
        if run is None:
            if labels is None:
                labels = seen.counted_periods()
            run = replay_on(m, perf, seen, months, settings, labels)
            if key is not None:
                fresh[key] = encode_run(run)
        runs.append(run)
    if not seen.dated_in_future():  # such a pass changes with time: neither it nor its replays
        snapshots.save_passes(store, uid, perf, seq, fresh)
    return runs


def _savable(model: ScaleModel | None) -> bool:
    """Whether a scale's replay may be saved: the Lichess scale and the models of the code
    (:data:`~tracker.fide.scale.MODELS`, in the replay's key through :data:`RUN_PRINT`), not a
    club model, which is data in the store that may change without a game written."""
    return model is None or MODELS.get(model.key) is model


def report_replays(store: Store, uid: str, perf: str, settings: ResolvedSettings,
                   models: Sequence[ScaleModel]) -> tuple[Pass, list[OnScale]]:
    """The pass over ``uid``'s games of ``perf`` and its replay on each of ``models`` (on
    the Lichess scale when there are none), in that order: read from what is saved while no
    game was written since, else computed (and saved for the next report). The pass and
    every replay are read in one query; a replay is computed once per pass, for all models
    together (one read of the games however many models). An empty pass (no games) has no
    replays."""
    key = options(settings.count_provisional)
    scales: list[ScaleModel | None] = list(models) or [None]
    saved = snapshots.saved_passes(
        store, uid, perf, [key, *(run_options(_scale_key(m), settings) for m in scales)])
    seen = decode(saved.payloads[key]) if key in saved.payloads else None
    if seen is None:
        with collector.paused():
            rows = queries.replay_rows(store, uid, perf)
            seen = save_walk(store, saved.write_seq, rows, uid, perf,
                          count_provisional=settings.count_provisional)
    if seen.rows == 0:
        return seen, []
    return seen, _replays(store, uid, perf, seen, scales, settings, saved.payloads,
                          saved.write_seq)


def default_scales(settings: ResolvedSettings, perf: str) -> list[ScaleModel | None]:
    """The scales a first report of ``perf`` reads with the player's saved settings: every
    model covering the perf for ``all`` (their median is the answer; the Lichess scale where
    none covers it), the model for a model key, the Lichess scale (``None``) for
    ``lichess``; a saved model that does not cover the perf gives the perf's default (what the
    report shows instead), a club model none (its replays are not saved)."""
    every: list[ScaleModel | None] = [*models_for(perf)] or [None]
    if settings.scale == LICHESS_SCALE:
        return [None]
    if settings.scale == ALL_MODELS:
        return every
    try:
        m = scale_model(settings.scale)
    except KeyError:  # a club model: data, not saved (see _savable)
        return []
    return [m] if m.covers(perf) else every  # a saved scale not covering it: the default


def refresh(store: Store, username: str, written: WrittenGames | None = None) -> list[str]:
    """Compute and save, ahead of a player's first report (right after an import changed
    their games), the pass over each of their perfs and its replay on each scale of
    :func:`default_scales`, with their saved settings, from one read of their games,
    streamed, or from the games an import kept (``written``) where they are all the database
    holds (:class:`~tracker.store.games.WrittenGames`: the same rows). A perf no replay reads
    (a variant) is left alone, and so is one whose pass and replays are all current. Returns
    the perfs computed, by perf key. Raises UnknownPlayerError for a player with no games."""
    uid = queries.resolve_player(store, username)
    saved_settings = validate_settings(get_settings(store, uid))
    seq = snapshots.write_seq(store)
    done: list[str] = []
    with collector.paused():
        kept = written.replay_rows_by_perf(store, uid) if written is not None else None
        rows_by_perf = kept if kept is not None else queries.replay_rows_by_perf(store, uid)
        for stored, rows in groupby(rows_by_perf, key=itemgetter(-1)):
            try:
                perf = perf_key(stored or "")
            except PerfError:
                continue
            if perf != stored:  # not a key replay_rows() would select by
                continue
            settings = saved_settings.resolved(perf)
            scales = default_scales(settings, perf)
            key = options(settings.count_provisional)
            keys = [key, *(run_options(_scale_key(m), settings) for m in scales)]
            current = snapshots.saved_passes(store, uid, perf, keys)
            if current.write_seq != seq:  # a write since: compute everything at ``seq``
                current = snapshots.SavedPasses(seq)
            if set(keys) <= set(current.payloads):
                continue
            seen = decode(current.payloads[key]) if key in current.payloads else None
            if seen is None:
                seen = save_walk(store, seq, rows, uid, perf,
                                 count_provisional=settings.count_provisional)
            if seen.rows:
                _replays(store, uid, perf, seen, scales, settings, current.payloads, seq)
            done.append(perf)
    return done
