"""The FIDE rating engine: pure functions, no I/O (the rules: ``docs/rules.md``).

- :mod:`tracker.fide.tables`: tables 8.1.1 and 8.1.2 in integer hundredths;
- :mod:`tracker.fide.rules`: expected score, the 400-point rule, K, the 700 rule, rounding;
- :mod:`tracker.fide.replay`: counted games → monthly rating periods;
- :mod:`tracker.fide.calc`: the Elo calculator.
"""

from tracker.fide.calc import CalcGame, CalcResult, calculate, parse_score
from tracker.fide.replay import (
    CountedGame,
    PeriodResult,
    ReplaySettings,
    game_expected,
    initial_rating,
    performance_rating,
    replay,
)
from tracker.fide.rules import (
    CHAPTERS,
    DEFAULT_CHAPTER,
    DEFAULT_EXPECTED,
    DEFAULT_RULES,
    EXPECTED_METHODS,
    RULES,
    Chapter,
    ExpectedMethod,
    Rules,
    apply_700_rule,
    capped_difference,
    chapter_for_perf,
    development_coefficient,
    expected_score,
    rated_in_chapter,
    round_half_away,
    round_half_up,
)
from tracker.fide.tables import (
    EXPECTED_SCORE_UPPER_BOUNDS,
    dp_from_p,
    expected_score_hundredths,
)

__all__ = [
    "CHAPTERS",
    "DEFAULT_CHAPTER",
    "DEFAULT_EXPECTED",
    "DEFAULT_RULES",
    "EXPECTED_METHODS",
    "EXPECTED_SCORE_UPPER_BOUNDS",
    "RULES",
    "CalcGame",
    "CalcResult",
    "Chapter",
    "CountedGame",
    "ExpectedMethod",
    "PeriodResult",
    "ReplaySettings",
    "Rules",
    "apply_700_rule",
    "calculate",
    "capped_difference",
    "chapter_for_perf",
    "development_coefficient",
    "dp_from_p",
    "expected_score",
    "expected_score_hundredths",
    "game_expected",
    "initial_rating",
    "parse_score",
    "performance_rating",
    "rated_in_chapter",
    "replay",
    "round_half_away",
    "round_half_up",
]
