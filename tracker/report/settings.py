"""A player's replay settings: what they are, their defaults and their ranges.

:class:`PlayerSettings` holds what a player saved (``None`` = the product default);
:meth:`PlayerSettings.resolved` fills the defaults in (:class:`ResolvedSettings`, what a replay
actually used), and :meth:`ResolvedSettings.engine` hands the engine its
:class:`~tracker.fide.ReplaySettings`. The defaults are the engine's: one place each.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from datetime import date
from typing import Any, Final, Literal, TypeGuard, get_args

from tracker.core.errors import TrackerError
from tracker.fide import (
    DEFAULT_EXPECTED,
    DEFAULT_RULES,
    EXPECTED_METHODS,
    RULES,
    Chapter,
    ExpectedMethod,
    ReplaySettings,
    Rules,
    chapter_for_perf,
)
from tracker.fide.replay import RATING_FLOOR
from tracker.fide.rules import CHAPTERS, is_chapter, is_method, is_rules
from tracker.fide.scale import MODELS
from tracker.store import players, queries
from tracker.store.db import Store

#: The lowest FIDE rating a user may give as a start rating: FIDE publishes none below the
#: rating floor (§7.1.4, ``docs/rules.md`` §6), so this *is* the floor.
MIN_START_RATING: Final = RATING_FLOOR
MAX_START_RATING: Final = 3500
#: The range of a start rating given on the Lichess scale (mapped through the model).
MIN_LICHESS_START_RATING: Final = 400

#: The raw Lichess numbers, no model: the replay as it was before scale models.
LICHESS_SCALE: Final = "lichess"
#: Every model that covers the perf, reported as a band.
ALL_MODELS: Final = "all"
#: ``--scale`` values: ``lichess``, a model key of :data:`tracker.fide.scale.MODELS`, ``all``.
SCALES: Final = (LICHESS_SCALE, *MODELS, ALL_MODELS)
#: ``--scale club:NAME``: the club model of group NAME (:mod:`tracker.report.calibration`).
CLUB_PREFIX: Final = "club:"
#: [choice] The default scale: every model covering the perf, their median the answer
#: (docs/rules.md §11 says why); the raw Lichess numbers where no model covers the perf
#: (:func:`default_scale`).
DEFAULT_SCALE: Final = ALL_MODELS


def default_scale(perf: str | None) -> str:
    """The scale a replay of ``perf`` uses when none is given or saved: ``all`` (every model
    covering it), or ``lichess`` for a perf no model covers (correspondence, ultraBullet)."""
    if perf is None or any(m.covers(perf) for m in MODELS.values()):
        return ALL_MODELS
    return LICHESS_SCALE


#: Which scale a start rating is given on: ``fide`` (a real FIDE rating, used as is) or
#: ``lichess`` (mapped through the replay's model, like the opponents).
StartScale = Literal["fide", "lichess"]
START_SCALES: Final[tuple[str, ...]] = get_args(StartScale)
DEFAULT_START_SCALE: Final[StartScale] = "fide"


def is_start_scale(value: object) -> TypeGuard[StartScale]:
    return value in START_SCALES


class SettingsError(TrackerError, ValueError):
    """A replay setting out of range (one-line message)."""

    exit_code = 2  # a bad value given: a usage error


@dataclass(frozen=True, slots=True)
class PlayerSettings:
    """A player's replay settings; ``None`` fields mean "the product default".

    ``start_rating``: the player's real FIDE rating to start from (rating points), ``None`` =
    start unrated (default). ``birth_year`` enables the junior K 40. ``rules``:
    ``fide-2025-10`` (default) or ``fide-2024-03``. ``expected``: ``table`` (default) or
    ``formula``. ``count_provisional``: count games against provisional opponents (default no).
    ``scale``: ``lichess``, a scale model's key, or ``all`` (default; ``lichess`` for a perf no
    model covers, see :func:`default_scale`; docs/rules.md §11).
    ``start_scale``: the scale ``start_rating`` is on, ``fide`` (default) or ``lichess``.
    ``chapter``: force FIDE's ``standard`` or ``rapid-blitz`` chapter; ``None`` (default) =
    by perf (docs/rules.md §10).
    """

    start_rating: int | None = None
    birth_year: int | None = None
    rules: Rules | None = None
    expected: ExpectedMethod | None = None
    count_provisional: bool | None = None
    scale: str | None = None
    start_scale: StartScale | None = None
    chapter: Chapter | None = None

    def resolved(self, perf: str | None = None) -> ResolvedSettings:
        """Every default filled in; the chapter by ``perf`` unless one is forced (without a
        perf: the standard chapter)."""
        return ResolvedSettings(
            start_rating=self.start_rating,
            birth_year=self.birth_year,
            rules=self.rules or DEFAULT_RULES,
            expected=self.expected or DEFAULT_EXPECTED,
            count_provisional=bool(self.count_provisional),
            scale=self.scale or default_scale(perf),
            start_scale=self.start_scale or DEFAULT_START_SCALE,
            chapter=self.chapter or (chapter_for_perf(perf) if perf else "standard"),
        )

    def override(self, **flags: Any) -> PlayerSettings:
        """These settings with every flag that is not ``None`` put over them (the named
        values in any case: ``--scale ALL`` is ``all``)."""
        values = {k: getattr(self, k) for k in SETTING_NAMES}
        values.update({k: v for k, v in lowered(flags).items() if v is not None})
        return PlayerSettings(**values)


#: The settings whose values are names, taken in any case (``--scale Lebowitz``).
NAMED: Final = ("rules", "expected", "scale", "start_scale", "chapter")


def lowered(values: dict[str, Any]) -> dict[str, Any]:
    """``values`` with the named settings' text stripped and lowercased (see :data:`NAMED`)."""
    return {k: v.strip().lower() if k in NAMED and isinstance(v, str) else v
            for k, v in values.items()}


#: The names of the settings, in order (the keys :func:`save_settings` accepts).
SETTING_NAMES: Final = tuple(f.name for f in fields(PlayerSettings))


@dataclass(frozen=True, slots=True)
class ResolvedSettings:
    """Settings with every default filled in (what a replay actually used)."""

    start_rating: int | None
    birth_year: int | None
    rules: Rules
    expected: ExpectedMethod
    count_provisional: bool
    scale: str = DEFAULT_SCALE
    start_scale: StartScale = DEFAULT_START_SCALE
    chapter: Chapter = "standard"

    def engine(self, *, start_rating: int | Literal["given"] | None = "given") -> ReplaySettings:
        """The engine's settings; ``start_rating`` replaces the given one (e.g. a Lichess
        start rating mapped to the FIDE scale)."""
        return ReplaySettings(
            start_rating=self.start_rating if start_rating == "given" else start_rating,
            birth_year=self.birth_year,
            rules=self.rules,
            expected=self.expected,
            chapter=self.chapter,
        )


def _club_scale_ok(scale: str) -> bool:
    """``club:GROUP`` with a name a group can have (whether it has a model is checked by the
    replay)."""
    from tracker.store.groups import check_name

    if not scale.startswith(CLUB_PREFIX):
        return False
    try:
        check_name(scale.removeprefix(CLUB_PREFIX))
    except ValueError:
        return False
    return True


def validate_settings(s: PlayerSettings) -> PlayerSettings:
    """Check ranges; raises SettingsError with a one-line message."""
    if s.scale is not None and s.scale not in SCALES and not _club_scale_ok(s.scale):
        raise SettingsError(f"unknown scale {s.scale!r}: use {', '.join(SCALES)} or "
                            "club:GROUP (a group's calibrated model)")
    if s.start_scale is not None and not is_start_scale(s.start_scale):
        raise SettingsError(
            f"unknown start-rating scale {s.start_scale!r}: use {' or '.join(START_SCALES)}")
    if s.chapter is not None and not is_chapter(s.chapter):
        raise SettingsError(f"unknown chapter {s.chapter!r}: use {' or '.join(CHAPTERS)}")
    on_lichess = s.start_scale == "lichess" and (s.scale or DEFAULT_SCALE) != LICHESS_SCALE
    low = MIN_LICHESS_START_RATING if on_lichess else MIN_START_RATING
    if s.start_rating is not None and not low <= s.start_rating <= MAX_START_RATING:
        if on_lichess:
            raise SettingsError(
                f"start rating {s.start_rating} is out of range: a Lichess rating is "
                f"{low}–{MAX_START_RATING} (leave it out to start unrated)"
            )
        raise SettingsError(
            f"start rating {s.start_rating} is out of range: a FIDE rating is "
            f"{MIN_START_RATING}–{MAX_START_RATING} (leave it out to start unrated)"
        )
    this_year = date.today().year
    if s.birth_year is not None and not 1900 <= s.birth_year <= this_year:
        raise SettingsError(f"birth year {s.birth_year} is out of range (1900–{this_year})")
    if s.rules is not None and not is_rules(s.rules):
        raise SettingsError(f"unknown rules version {s.rules!r}: use {' or '.join(RULES)}")
    if s.expected is not None and not is_method(s.expected):
        raise SettingsError(
            f"unknown expected-score method {s.expected!r}: use {' or '.join(EXPECTED_METHODS)}"
        )
    return s


def _saved_rules(value: str | None) -> Rules | None:
    return value if is_rules(value) else None


def _saved_method(value: str | None) -> ExpectedMethod | None:
    return value if is_method(value) else None


def get_settings(store: Store, username: str) -> PlayerSettings:
    """The saved settings of a player (all ``None`` if the player has none saved)."""
    row = players.get_settings_row(store, username)
    return PlayerSettings(row.start_rating, row.birth_year, _saved_rules(row.rules),
                          _saved_method(row.expected), row.count_provisional, row.scale,
                          row.start_scale if is_start_scale(row.start_scale) else None,
                          row.chapter if is_chapter(row.chapter) else None)


def save_settings(store: Store, username: str, **changes: Any) -> PlayerSettings:
    """Save settings for a player (keys of :class:`PlayerSettings`; ``None`` resets one to the
    default). Returns the saved settings. Raises SettingsError, UnknownPlayerError."""
    uid = queries.resolve_player(store, username)
    unknown = set(changes) - set(SETTING_NAMES)
    if unknown:
        raise SettingsError(f"unknown setting(s): {', '.join(sorted(unknown))}")
    merged = {k: getattr(get_settings(store, uid), k) for k in SETTING_NAMES}
    merged.update(lowered(changes))
    settings = validate_settings(PlayerSettings(**merged))
    players.save_settings_row(store, uid, players.SettingsRow(
        settings.start_rating, settings.birth_year, settings.rules, settings.expected,
        settings.count_provisional, settings.scale, settings.start_scale, settings.chapter))
    return settings
