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
    DEFAULT_EXPECTED,
    DEFAULT_RULES,
    EXPECTED_METHODS,
    RULES,
    ExpectedMethod,
    Rules,
    apply_700_rule,
    capped_difference,
    development_coefficient,
    expected_score,
    round_half_away,
    round_half_up,
)
from tracker.fide.tables import (
    EXPECTED_SCORE_UPPER_BOUNDS,
    dp_from_p,
    expected_score_hundredths,
)

__all__ = [
    "DEFAULT_EXPECTED",
    "DEFAULT_RULES",
    "EXPECTED_METHODS",
    "EXPECTED_SCORE_UPPER_BOUNDS",
    "RULES",
    "CalcGame",
    "CalcResult",
    "CountedGame",
    "ExpectedMethod",
    "PeriodResult",
    "ReplaySettings",
    "Rules",
    "apply_700_rule",
    "calculate",
    "capped_difference",
    "development_coefficient",
    "dp_from_p",
    "expected_score",
    "expected_score_hundredths",
    "game_expected",
    "initial_rating",
    "parse_score",
    "performance_rating",
    "replay",
    "round_half_away",
    "round_half_up",
]
