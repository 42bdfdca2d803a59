"""Strength shown in the moves (``docs/strength.md``): pure, no I/O in the formulas.

- :mod:`tracker.core.evals`: the per-ply evaluation type (:class:`~.evals.PlyEval`);
- :mod:`tracker.analysis.formulas`: Lichess's accuracy, ACPL and judgments, reproduced;
- :mod:`tracker.analysis.turning`: where a game turned;
- :mod:`tracker.analysis.level`: the level a game, or a set of games, shows (a fitted model
  read from ``tracker/analysis/models/``).

The package root imports nothing, so the sources and the store may use the eval type alone.
"""
