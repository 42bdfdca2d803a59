"""A player's replay settings: what they are, their defaults and their ranges.

:class:`PlayerSettings` holds what a player saved (``None`` = the product default);
:meth:`PlayerSettings.resolved` fills the defaults in (:class:`ResolvedSettings`, what a replay
actually used), and :meth:`ResolvedSettings.engine` hands the engine its
:class:`~tracker.fide.ReplaySettings`. The defaults are the engine's: one place each.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from datetime import date
from typing import Any, Final

from tracker.errors import TrackerError
from tracker.fide import (
    DEFAULT_EXPECTED,
    DEFAULT_RULES,
    EXPECTED_METHODS,
    RULES,
    ExpectedMethod,
    ReplaySettings,
    Rules,
)
from tracker.fide.replay import RATING_FLOOR
from tracker.fide.rules import is_method, is_rules
from tracker.store import queries
from tracker.store.db import Store
from tracker.store.models import Player

#: The lowest FIDE rating a user may give as a start rating: FIDE publishes none below the
#: rating floor (§7.1.4, ``docs/rules.md`` §6), so this *is* the floor.
MIN_START_RATING: Final = RATING_FLOOR
MAX_START_RATING: Final = 3500


class SettingsError(TrackerError, ValueError):
    """A replay setting out of range (one-line message)."""


@dataclass(frozen=True, slots=True)
class PlayerSettings:
    """A player's replay settings; ``None`` fields mean "the product default".

    ``start_rating``: the player's real FIDE rating to start from (rating points), ``None`` =
    start unrated (default). ``birth_year`` enables the junior K 40. ``rules``:
    ``fide-2025-10`` (default) or ``fide-2024-03``. ``expected``: ``table`` (default) or
    ``formula``. ``count_provisional``: count games against provisional opponents (default no).
    """

    start_rating: int | None = None
    birth_year: int | None = None
    rules: Rules | None = None
    expected: ExpectedMethod | None = None
    count_provisional: bool | None = None

    def resolved(self) -> ResolvedSettings:
        return ResolvedSettings(
            start_rating=self.start_rating,
            birth_year=self.birth_year,
            rules=self.rules or DEFAULT_RULES,
            expected=self.expected or DEFAULT_EXPECTED,
            count_provisional=bool(self.count_provisional),
        )

    def override(self, **flags: Any) -> PlayerSettings:
        """These settings with every flag that is not ``None`` put over them."""
        values = {k: getattr(self, k) for k in SETTING_NAMES}
        values.update({k: v for k, v in flags.items() if v is not None})
        return PlayerSettings(**values)


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

    def engine(self) -> ReplaySettings:
        return ReplaySettings(
            start_rating=self.start_rating,
            birth_year=self.birth_year,
            rules=self.rules,
            expected=self.expected,
        )


def validate_settings(s: PlayerSettings) -> PlayerSettings:
    """Check ranges; raises SettingsError with a one-line message."""
    if s.start_rating is not None and not MIN_START_RATING <= s.start_rating <= MAX_START_RATING:
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
    with store.session() as s:
        p = s.get(Player, username.lower())
        if p is None:
            return PlayerSettings()
        return PlayerSettings(p.start_rating, p.birth_year, _saved_rules(p.rules),
                              _saved_method(p.expected), p.count_provisional)


def save_settings(store: Store, username: str, **changes: Any) -> PlayerSettings:
    """Save settings for a player (keys of :class:`PlayerSettings`; ``None`` resets one to the
    default). Returns the saved settings. Raises SettingsError, UnknownPlayerError."""
    uid = queries.resolve_player(store, username)
    unknown = set(changes) - set(SETTING_NAMES)
    if unknown:
        raise SettingsError(f"unknown setting(s): {', '.join(sorted(unknown))}")
    merged = {k: getattr(get_settings(store, uid), k) for k in SETTING_NAMES}
    merged.update(changes)
    settings = validate_settings(PlayerSettings(**merged))
    store.ensure_player(uid)
    with store.session() as s:
        p = s.get(Player, uid)
        assert p is not None
        for k in SETTING_NAMES:
            setattr(p, k, getattr(settings, k))
    return settings
