"""The group table: one row per member of a group, from each member's replay report.

Per player and perf, the replay on every scale model (``--scale all``) is summarised once —
the models' median, lowest and highest FIDE-style rating after each period, the real Lichess
line's times and ratings, why the player is unrated — and saved in the database beside the
replay passes (:mod:`tracker.store.snapshots`, under an ``options`` key of its own), with the
database's write counter: the next table reads one row per member until a game is written,
as the Overview reads a saved pass. :func:`table_rows` then answers "as of ``now``" from the
summaries alone: the rating now, the change over the last three months, the rated games of
the last 30 days, the real FIDE rating in force and the gap.

The level shown in play is :func:`analysed_level`: the level the member's last analysed games
show (:mod:`tracker.report.strength`), ``None`` ("not analysed") without analysed games.
"""

from __future__ import annotations

import hashlib
from array import array
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Final

import msgspec

from tracker.core.errors import TrackerError
from tracker.core.fide_records import ListEntry
from tracker.core.perfs import perf_key
from tracker.core.records import month_of
from tracker.core.utc import utc_from_ms
from tracker.report import replay as report
from tracker.report import saved_pass as report_pass
from tracker.report.saved_pass import array_bytes, bytes_array
from tracker.store import group_reads, queries, snapshots
from tracker.store.analysis import analysed_players
from tracker.store.db import Store
from tracker.store.players import SettingsRow, get_settings_row

DAY_MS: Final = 86_400_000
#: "Games in the last 30 days": rated games of the perf that ended in the 30 days up to now.
RECENT_DAYS: Final = 30
#: "The change over the last 3 months": the rating in force now minus three months before.
CHANGE_MONTHS: Final = 3
#: What the level column says for a player whose games have no move analysis.
NOT_ANALYSED: Final = "not analysed"


#: The version of a member's saved summary: bump it whenever what a summary holds changes
#: (this module's figures, the replay report it reads, the engine, the scale models).
GROUP_VERSION: Final = 2  # 2: the club model's unrated reason

#: What a saved summary's options hold of the code beside :data:`GROUP_VERSION`: the pass's
#: version (a new pass version never reads an old summary).
CODE_PRINT: Final = report_pass.CODE_PRINT


class _Saved(msgspec.Struct, array_like=True):
    """A member's summary as saved (see :class:`Summary`); arrays as little-endian bytes."""

    name: str
    games: int
    counted: int
    models: list[str]
    periods: list[str]
    median2: list[int | None]
    low: list[int | None]
    high: list[int | None]
    unrated: str | None
    ends: bytes
    ratings: bytes
    error: str | None = None
    club: list[int | None] = []
    club_label: str | None = None
    club_unrated: str | None = None


_DECODER: Final = msgspec.msgpack.Decoder(_Saved)


@dataclass(frozen=True, slots=True)
class Summary:
    """One member's replay on every scale model, as the table needs it.

    ``periods``: the months with games of the perf, oldest first; per period the models'
    ``median`` (exact: the mean of the middle two for an even count), ``low`` and ``high``
    FIDE-style rating after it (rating points; ``None``: unrated under every model).
    ``models``: the model keys. ``unrated``: why the player has no FIDE-style rating after
    the last period (``None``: rated). ``ends``/``ratings``: the real Lichess line, each rated
    game's end (ms since the epoch, UTC) and the rating after it. ``games``: the games of the
    perf; ``counted``: those FIDE's method counts. ``error``: why there is no replay (no
    games in the perf, no model covering it), saved too. ``club``: the rating after each
    period under the group's club model (``club_label`` names it), empty without one;
    ``club_unrated``: why the club model leaves the player unrated after the last period
    (``None``: rated, or no club model).
    """

    name: str
    games: int
    counted: int
    models: tuple[str, ...]
    periods: tuple[str, ...]
    median: tuple[Fraction | None, ...]
    low: tuple[int | None, ...]
    high: tuple[int | None, ...]
    unrated: str | None
    ends: array[int]
    ratings: array[int]
    error: str | None = None
    club: tuple[int | None, ...] = ()
    club_label: str | None = None
    club_unrated: str | None = None

    def at(self, month: str) -> tuple[Fraction | None, int | None, int | None] | None:
        """``(median, low, high)`` in force after the last period up to ``month``
        (``"YYYY-MM"``); ``None`` before the first period."""
        i = bisect_right(self.periods, month) - 1
        if i < 0:
            return None
        return self.median[i], self.low[i], self.high[i]

    def club_at(self, month: str) -> int | None:
        """The club model's rating in force after the last period up to ``month``."""
        i = bisect_right(self.periods, month) - 1
        return self.club[i] if 0 <= i < len(self.club) else None

    def lichess_at(self, ms: int) -> int | None:
        """The Lichess rating after the last rated game that ended by ``ms``."""
        i = bisect_right(self.ends, ms) - 1
        return self.ratings[i] if i >= 0 else None

    def games_between(self, start_ms: int, end_ms: int) -> int:
        """Rated games of the perf that ended in ``(start_ms, end_ms]``."""
        return bisect_right(self.ends, end_ms) - bisect_right(self.ends, start_ms)


def _encode(s: Summary) -> bytes:
    return msgspec.msgpack.encode(_Saved(
        s.name, s.games, s.counted, list(s.models), list(s.periods),
        [None if m is None else int(m * 2) for m in s.median], list(s.low), list(s.high),
        s.unrated, array_bytes(s.ends), array_bytes(s.ratings), s.error, list(s.club),
        s.club_label, s.club_unrated))


def _decode(payload: bytes) -> Summary | None:
    try:
        saved = _DECODER.decode(payload)
        ends, ratings = bytes_array("q", saved.ends), bytes_array("i", saved.ratings)
    except (msgspec.DecodeError, ValueError):
        return None
    n = len(saved.periods)
    if not (n == len(saved.median2) == len(saved.low) == len(saved.high)
            and len(ends) == len(ratings) and len(saved.club) in (0, n)):
        return None
    return Summary(saved.name, saved.games, saved.counted, tuple(saved.models),
                   tuple(saved.periods),
                   tuple(None if m is None else Fraction(m, 2) for m in saved.median2),
                   tuple(saved.low), tuple(saved.high), saved.unrated, ends, ratings,
                   saved.error, tuple(saved.club), saved.club_label, saved.club_unrated)


def _summarise(r: report.ReplayReport) -> Summary:
    """The summary of a ``--scale all`` report."""
    median: list[Fraction | None] = []
    low: list[int | None] = []
    high: list[int | None] = []
    for row in r.periods:
        band = row.band
        if band is None:  # one model only: its rating is the whole band
            after = row.result.rating_after
            band = report.band_of({r.scale: after})
        median.append(band.median)
        low.append(band.min)
        high.append(band.max)
    unrated = _unrated(r) if not median or median[-1] is None else None
    ends: array[int] = array("q")
    ratings: array[int] = array("i")
    for p in r.lichess:
        ends.append(int(p.at.timestamp() * 1000))
        ratings.append(p.rating)
    return Summary(r.player, len(r.games), r.counted, tuple(m.key for m in r.models),
                   tuple(row.period for row in r.periods), tuple(median), tuple(low),
                   tuple(high), unrated, ends, ratings)


def _unrated(r: report.ReplayReport) -> str:
    """Why ``r`` leaves the player unrated after its last period ("unrated: …")."""
    reason = r.unrated_reason() or "unrated"
    reason = reason.removesuffix(": unrated from next period")
    return reason if reason.startswith("unrated") else f"unrated: {reason}"


@dataclass(frozen=True, slots=True)
class ClubScale:
    """A group's club model for a perf, as the table uses it: the ``scale`` to replay with
    (``club:NAME``), a ``key`` that changes when the model is refitted, its ``label``."""

    scale: str
    key: str
    label: str


def club_scale(store: Store, group: str, perf: str) -> ClubScale | None:
    """Group ``group``'s club model for ``perf`` (``tracker group calibrate``), ``None``
    when none is fitted."""
    from tracker.report.calibration import ClubModelError, club_scale_model
    from tracker.report.settings import CLUB_PREFIX

    scale = f"{CLUB_PREFIX}{group}"
    try:
        model = club_scale_model(store, scale, perf)
    except ClubModelError:
        return None
    key = hashlib.sha256(repr(model).encode()).hexdigest()[:16]
    return ClubScale(scale, key, model.name)


def _options(settings: SettingsRow, perf: str, club: ClubScale | None = None
             ) -> snapshots.Key:
    """The saved summary's key: the player's settings as stored (all but the scale, which is
    every model here), the club model if any, and the pass's version, hashed (32
    characters), under :data:`GROUP_VERSION`."""
    s = settings
    key = repr((perf, s.start_rating, s.birth_year, s.rules, s.expected, s.count_provisional,
                s.start_scale, s.chapter, CODE_PRINT, club.key if club else ""))
    return snapshots.Key(snapshots.GROUP, hashlib.sha256(key.encode()).hexdigest()[:32],
                         GROUP_VERSION)


def summary(store: Store, username: str, perf: str, club: ClubScale | None = None
            ) -> Summary:
    """The member's summary in ``perf``: the saved one while no game was written since, else
    computed from their replay report on every model covering the perf (``--scale all``)
    and saved (not on a read-only store). No games in the perf, or no model covering it, is
    a summary with its ``error``. Raises UnknownPlayerError (no games stored),
    SettingsError."""
    perf = perf_key(perf)
    uid = queries.resolve_player(store, username)
    options = _options(get_settings_row(store, uid), perf, club)
    saved = snapshots.saved_pass(store, uid, perf, options)
    if saved.payload is not None:
        found = _decode(saved.payload)
        if found is not None:
            return found
    return _computed(store, uid, perf, options, saved.write_seq, club)


def _with_club(store: Store, uid: str, perf: str, built: Summary, club: ClubScale
               ) -> Summary:
    """``built`` with the club model's rating after each period (the same periods: the same
    games, another scale)."""
    r = report.build_report(store, uid, perf, report.ReplayOptions(scale=club.scale))
    after = tuple(row.result.rating_after for row in r.periods)
    if len(after) != len(built.periods):
        return built
    unrated = _unrated(r) if after and after[-1] is None else None
    return replace(built, club=after, club_label=club.label, club_unrated=unrated)


def _computed(store: Store, uid: str, perf: str, options: snapshots.Key, seq: int,
              club: ClubScale | None = None) -> Summary:
    """The summary from the replay report, saved at ``seq`` (the write counter read before
    anything else: a write in between leaves it stale, never wrong)."""
    try:
        built = _summarise(report.build_report(store, uid, perf, report.ReplayOptions(scale="all")))
        if club is not None:
            built = _with_club(store, uid, perf, built, club)
    except (report.NoGamesError, report.ScaleError) as exc:
        reason = str(exc).split(";")[0]  # "x has no blitz games" without the perfs they have
        built = Summary(uid, 0, 0, (), (), (), (), (), None, array("q"), array("i"), reason)
    snapshots.save_pass(store, uid, perf, options, seq, _encode(built))
    return built


def refresh(store: Store, usernames: Sequence[str], perfs: Sequence[str],
            group: str | None = None) -> int:
    """Compute and save the summaries of these players in these perfs that are not current
    (after a sync, so that the next group table reads saved rows), with ``group``'s club
    model where it has one; a player or perf without games is passed over. Returns how many
    were computed."""
    done = 0
    clubs = {p: club_scale(store, group, perf_key(p)) if group else None for p in perfs}
    for name in usernames:
        for perf in perfs:
            try:
                uid = queries.resolve_player(store, name)
                key = perf_key(perf)
                options = _options(get_settings_row(store, uid), key, clubs[perf])
                if snapshots.is_current(store, uid, key, options):
                    continue
                summary(store, uid, key, clubs[perf])
            except TrackerError:
                continue
            done += 1
    return done


def analysed_level(store: Store, username: str, perf: str) -> str | None:
    """The level the player's last analysed games of ``perf`` show together (the last
    :data:`~tracker.report.strength.RECENT_GAMES`), on the perf's Lichess scale as text,
    ``"1650 (1540–1760)"`` (estimate and its 10–90 % range); ``None`` when no game is analysed
    or no level model serves the perf: the one place the move analysis is wired into the
    table. Where the estimate falls where the model is weak or outside its fitted range, the
    text says so (``", where the model is weak"``: ``tracker strength`` says why); where some of
    those games carry local evals no engine calibration covers (they read high), it ends
    ``", uncalibrated evals"``."""
    from tracker.analysis.level import caution
    from tracker.core.errors import NoAnalysisError
    from tracker.report.strength import model_for, player_strength

    try:
        report = player_strength(store, username, perf)
    except NoAnalysisError:
        return None
    level = report.recent.level
    model = model_for(perf)
    if level is None or model is None:
        return None
    careful = caution(model, level)
    raw = report.recent_uncalibrated()
    return (f"{level.estimate} ({level.low}–{level.high})" + (f", {careful}" if careful else "")
            + (", uncalibrated evals" if raw else ""))


@dataclass(frozen=True, slots=True)
class GroupRow:
    """One member of the group table, as of a moment ``now``.

    ``fide``/``fide_low``/``fide_high``: the hypothetical FIDE rating now (the models'
    median, exact, and their band), ``None`` when unrated (``note`` says why). ``real_fide``:
    the real FIDE rating in force now on the standard list (what the models estimate), with
    its ``real_month``; ``gap`` = ``fide − real_fide``. ``lichess``: the Lichess rating after
    the last rated game by now. ``recent_games``: rated games of the perf in the 30 days up
    to now. ``change``: the hypothetical rating now minus the one in force three months
    before (``None`` unless both exist). ``level``: the level shown in analysed games
    (``None``: not analysed). ``note``: why figures are missing ("no blitz games", "unrated:
    …"), ``None`` when nothing is. ``fide_id``: the group's FIDE id for the member.
    """

    username: str
    user_id: str
    fide_id: int | None
    fide: Fraction | None
    fide_low: int | None
    fide_high: int | None
    real_fide: int | None
    real_month: str | None
    gap: Fraction | None
    lichess: int | None
    recent_games: int
    change: Fraction | None
    level: str | None
    games: int
    counted: int
    note: str | None
    line: tuple[tuple[str, Fraction | None, int | None, int | None], ...] = ()
    club: int | None = None
    #: Rated games of the perf since the start of the month three months back: 0 means the
    #: ``change`` is no change of form but no games ("no games", not "0"); ``None`` unknown.
    games_3m: int | None = None


def months_before(month: str, n: int) -> str:
    """``"YYYY-MM"`` ``n`` months before ``month``."""
    y, m = int(month[:4]), int(month[5:7])
    k = y * 12 + (m - 1) - n
    return f"{k // 12:04d}-{k % 12 + 1:02d}"


def _in_force(entries: Sequence[ListEntry] | None, month: str) -> tuple[int | None, str | None]:
    """The rating of the last list entry up to ``month`` and that entry's month."""
    months = [e.month for e in entries or ()]
    i = bisect_right(months, month) - 1
    if entries is None or i < 0:
        return None, None
    return entries[i].rating, entries[i].month


NOT_IMPORTED: Final = "no games imported yet (tracker sync --group imports them)"


def member_row(username: str, uid: str, fide_id: int | None, s: Summary | None,
               real_list: Sequence[ListEntry] | None, level: str | None, now_ms: int,
               linked: int | None = None) -> GroupRow:
    """The table's row for one member (see :class:`GroupRow`) from their summary (``None``:
    no games stored) and real FIDE list (of the ``linked`` FIDE id); a member without
    figures is a row with its ``note``, never an error. The group's ``fide_id`` and the
    linked one differing (linked by hand, or before the group's id was changed), the linked
    id's list is another person's as far as the group knows: no real figure, and the note
    says so."""
    month = month_of(utc_from_ms(now_ms))
    other = fide_id is not None and linked is not None and linked != fide_id
    real, real_month = _in_force(None if other else real_list, month)
    real_note = (f"FIDE {fide_id}: not the linked id ({linked}): tracker sync links it"
                 if other else f"FIDE {fide_id}: no standard rating stored yet"
                 if fide_id is not None and real is None else None)
    if s is None or s.error is not None:
        note = NOT_IMPORTED if s is None else s.error
        return GroupRow(username, uid, fide_id, None, None, None, real, real_month, None,
                        None, 0, None, level, 0, 0, note)
    now = s.at(month)
    before = s.at(months_before(month, CHANGE_MONTHS))
    median, low, high = now if now is not None else (None, None, None)
    change = (median - before[0] if median is not None and before is not None
              and before[0] is not None else None)
    note = None if median is not None else (s.unrated or "unrated")
    club_now = s.club_at(month)
    if s.club and club_now is None and median is not None:
        # The club model leaves the player unrated while the published ones rate them:
        # say why the club column is empty (a pool below 1400 on the club's lower line).
        note = f"club model: {s.club_unrated or 'unrated'}"
    if real_note is not None:
        note = f"{note}; {real_note}" if note else real_note
    return GroupRow(
        username=s.name or username, user_id=uid, fide_id=fide_id, fide=median,
        fide_low=low, fide_high=high, real_fide=real, real_month=real_month,
        gap=median - real if median is not None and real is not None else None,
        lichess=s.lichess_at(now_ms), recent_games=s.games_between(
            now_ms - RECENT_DAYS * DAY_MS, now_ms),
        change=change, level=level, games=s.games, counted=s.counted, note=note,
        line=tuple(zip(s.periods, s.median, s.low, s.high, strict=True)),
        club=club_now,
        games_3m=s.games_between(_month_start_ms(months_before(month, CHANGE_MONTHS)) - 1,
                                 now_ms),
    )


def _month_start_ms(month: str) -> int:
    """The first instant of ``"YYYY-MM"`` (UTC), ms since the epoch."""
    from datetime import UTC, datetime

    start = datetime(int(month[:4]), int(month[5:7]), 1, tzinfo=UTC)
    return int(start.timestamp()) * 1000


def table_rows(store: Store, members: Sequence[tuple[str, int | None]], perf: str,
               now_ms: int, club: ClubScale | None = None) -> list[GroupRow]:
    """The group table: one :class:`GroupRow` per member (``(username, FIDE id)``), in the
    order given, with ``club`` (the group's club model) when it has one. Read with a few
    queries for the whole group
    (:mod:`tracker.store.group_reads`); a member whose summary is not current is replayed
    and saved (:func:`summary`)."""
    key = perf_key(perf)
    ids = [name.strip().lower() for name, _ in members]
    have = group_reads.players_with_games(store, ids)
    settings = group_reads.settings_rows(store, have)
    seq, payloads = group_reads.current_payloads(store, have, key, snapshots.GROUP,
                                                 GROUP_VERSION)
    lists = group_reads.fide_lists(store, have, "standard")
    linked = group_reads.linked_ids(store, have)
    analysed = analysed_players(store, have, key)  # the few with move analysis, one query
    rows = []
    for (name, fide_id), uid in zip(members, ids, strict=True):
        found: Summary | None = None
        if uid in have:
            options = _options(settings.get(uid, SettingsRow()), key, club)
            payload = payloads.get((uid, options.options))
            found = _decode(payload) if payload is not None else None
            if found is None:
                found = _computed(store, uid, key, options, seq, club)
        rows.append(member_row(name, uid, fide_id, found, lists.get(uid),
                               analysed_level(store, uid, key) if uid in analysed else None,
                               now_ms, linked.get(uid)))
    return rows
