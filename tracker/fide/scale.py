"""Scale models: a Lichess rating in one perf → an estimated FIDE standard rating.

FIDE's rules are written in FIDE rating points (the 1400 floor, the 1800 imaginary opponents,
K 10 from 2400…). A replay "on the FIDE scale" maps every opponent's Lichess rating through one
of these models before the engine sees it (``docs/rules.md`` §11). No model is a fact about a
player: they are fitted on self-reported FIDE ratings and disagree by 200–300 points, so the
product shows them as a band.

Each model is one :class:`ScaleModel` entry of :data:`MODELS` (adding a model is adding one
entry): key, name, source, year of fit, data used, the perfs it covers with a fit per perf, the
range it was fitted on, and whether it estimates the FIDE scale before or after FIDE's
1 March 2024 adjustment. Pure and exact: Fractions, rounding half away from zero; no floats.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from itertools import pairwise
from typing import Final, Literal, Protocol

from tracker.fide.rules import round_half_away

#: Which FIDE scale a model estimates: before or after the adjustment of 1 March 2024.
Era = Literal["pre-2024", "post-2024"]

#: The adjustment of 1 March 2024 raised every standard rating R with 1000 ≤ R < 2000 by
#: ``0.4 × (2000 − R)`` (FIDE QC notice of 2024-03-01): 1000 → 1400, 1500 → 1700, 1900 → 1940.
ADJUSTMENT_FROM: Final = 1000
ADJUSTMENT_TO: Final = 2000
ADJUSTMENT_SHARE: Final = Fraction(2, 5)
#: The highest FIDE standard rating ever published (Carlsen, May 2014): an estimate above it is
#: an extrapolation, said so.
HIGHEST_FIDE: Final = 2882
#: Before March 2024 FIDE published no rating below this: a pre-2024 estimate below it is
#: "unrated".
OLD_FLOOR: Final = 1000


class Fit(Protocol):
    """A model's formula for one perf: Lichess rating points → model output (exact), or
    ``None`` where the model gives no value (below its range)."""

    def __call__(self, lichess: int) -> Fraction | None: ...


@dataclass(frozen=True, slots=True)
class Linear:
    """``intercept + slope × x`` (decimal strings, kept exact)."""

    intercept: str
    slope: str

    def __call__(self, lichess: int) -> Fraction | None:
        return Fraction(self.intercept) + Fraction(self.slope) * lichess

    def __str__(self) -> str:
        return f"{self.intercept} + {self.slope}x"


@dataclass(frozen=True, slots=True)
class Piecewise:
    """Linear interpolation through ``anchors`` (Lichess → FIDE), in increasing order; above
    the last anchor the last segment's slope carries on; below the first there is no value."""

    anchors: tuple[tuple[int, int], ...]

    def __call__(self, lichess: int) -> Fraction | None:
        points = self.anchors
        if lichess < points[0][0]:
            return None
        for (x0, y0), (x1, y1) in pairwise(points):
            if lichess <= x1:
                return y0 + Fraction(y1 - y0, x1 - x0) * (lichess - x0)
        (x0, y0), (x1, y1) = points[-2], points[-1]
        return y1 + Fraction(y1 - y0, x1 - x0) * (lichess - x1)

    def __str__(self) -> str:
        return "piecewise linear through " + ", ".join(f"{x}→{y}" for x, y in self.anchors)


@dataclass(frozen=True, slots=True)
class ScaleModel:
    """One published Lichess → FIDE conversion.

    - ``key``: what ``--scale`` takes; ``name``; ``source``: URL of the fit;
    - ``year``: year of the fit (``None``: not stated by the source); ``data``: what it was
      fitted on;
    - ``fits``: perf key → formula (the perfs the model covers);
    - ``fitted_range``: where it was fitted, in words; ``era``: the FIDE scale it estimates;
    - ``caveat``: what a user should know before trusting it;
    - ``lichess_range`` / ``fide_range``: the fitted range as numbers (Lichess input, or the
      model's own FIDE output), ``None`` where the source states none.
    """

    key: str
    name: str
    source: str
    year: int | None
    data: str
    fits: Mapping[str, Fit]
    fitted_range: str
    era: Era
    caveat: str = ""
    lichess_range: tuple[int, int] | None = None
    fide_range: tuple[int, int] | None = None

    @property
    def perfs(self) -> tuple[str, ...]:
        """The perfs the model covers."""
        return tuple(self.fits)

    def covers(self, perf: str) -> bool:
        return perf in self.fits


@dataclass(frozen=True, slots=True)
class Conversion:
    """A Lichess rating through one model.

    ``output``: the model's output rounded half away from zero (on the model's own FIDE scale;
    ``None`` below the model's range); ``rating``: the estimated FIDE rating on today's scale,
    after the March 2024 adjustment for a pre-2024 model, ``None`` = unrated (below the model's
    range, or below 1000 on the old scale).
    """

    lichess: int
    output: int | None
    rating: int | None


MODELS: Final[Mapping[str, ScaleModel]] = {
    m.key: m
    for m in (
        ScaleModel(
            key="lebowitz",
            name="RatingConverter (E. Lebowitz)",
            source="https://ethanlebowitz.github.io/RatingConverter/ (converter.js, about.html)",
            year=None,
            data="~1M Lichess profiles, ~28,000 with a FIDE rating, at least 50 games per "
            "category; median (least-absolute-deviation) regression",
            fits={
                "bullet": Linear("506", "0.62"),
                "blitz": Linear("78.6", "0.804"),
                "rapid": Linear("-178.7", "0.899"),
                "classical": Linear("-277.3", "0.985"),
            },
            fitted_range="FIDE 1000–2900",
            era="pre-2024",
            fide_range=(1000, 2900),
        ),
        ScaleModel(
            key="mathtuition",
            name="Convert Lichess Blitz Rating to FIDE (mathtuition88.com)",
            source="https://mathtuition88.com/2020/02/10/convert-lichess-blitz-rating-to-fide/",
            year=2020,
            data="30 profiles; ordinary least squares, R² 0.741, residual SE ≈ 152",
            fits={"blitz": Linear("179.9", "0.8399")},
            fitted_range="not stated",
            era="pre-2024",
            caveat="a tiny sample (30 players)",
        ),
        ScaleModel(
            key="chessdojo-2024",
            name="ChessDojo Universal Rating Converter",
            source="https://github.com/jackstenglein/chess-dojo-scheduler "
            "(common/src/ratings/ratings.ts)",
            year=2024,
            data="ChessDojo members with a low-RD Lichess classical rating and an OTB rating; "
            "FIDE list of 2024-09-01",
            fits={
                "classical": Piecewise((
                    (1665, 1450), (1730, 1500), (1795, 1550), (1850, 1600), (1910, 1650),
                    (1970, 1700), (2030, 1750), (2090, 1800), (2150, 1850), (2225, 1910),
                    (2310, 2000), (2370, 2100), (2410, 2200), (2440, 2300), (2470, 2400),
                )),
            },
            fitted_range="Lichess classical 1665–2470 (no value below 1665)",
            era="post-2024",
            lichess_range=(1665, 2470),
            caveat="Lichess classical above ~2310 is too thin a pool to mean much; blitz "
            "ratings do not apply",
        ),
    )
}


def adjust_2024(rating: int) -> int:
    """A standard rating on the pre-March-2024 scale → today's scale (rating points).

    ``R + 0.4 × (2000 − R)`` for ``1000 ≤ R < 2000``, rounded half away from zero; others
    unchanged.

    >>> adjust_2024(1285), adjust_2024(1808), adjust_2024(2100)
    (1571, 1885, 2100)
    """
    if ADJUSTMENT_FROM <= rating < ADJUSTMENT_TO:
        return round_half_away(rating + ADJUSTMENT_SHARE * (ADJUSTMENT_TO - rating))
    return rating


def model(key: str) -> ScaleModel:
    """The model named ``key``; KeyError naming the known ones otherwise."""
    try:
        return MODELS[key]
    except KeyError:
        raise KeyError(f"unknown scale model {key!r}: use one of {', '.join(MODELS)}") from None


def models_for(perf: str) -> tuple[ScaleModel, ...]:
    """The models that cover ``perf``, in :data:`MODELS` order (may be empty)."""
    return tuple(m for m in MODELS.values() if m.covers(perf))


def convert(m: ScaleModel, perf: str, lichess: int, *, adjusted: bool = True) -> Conversion:
    """``lichess`` (rating points in ``perf``) through model ``m``.

    The model output is rounded half away from zero; for a pre-2024 model an output below 1000
    is unrated (FIDE's old floor), else the March 2024 adjustment is applied (rounded the same
    way) unless ``adjusted=False``. Raises ValueError if ``m`` does not cover ``perf``.

    >>> convert(MODELS["lebowitz"], "blitz", 1500).rating
    1571
    >>> convert(MODELS["chessdojo-2024"], "classical", 1600).rating is None
    True
    """
    fit = m.fits.get(perf)
    if fit is None:
        raise ValueError(f"{m.key} does not cover {perf}: it covers {', '.join(m.perfs)}")
    raw = fit(lichess)
    if raw is None:
        return Conversion(lichess, None, None)
    output = round_half_away(raw)
    if m.era == "post-2024":
        return Conversion(lichess, output, output)
    if output < OLD_FLOOR:
        return Conversion(lichess, output, None)
    return Conversion(lichess, output, adjust_2024(output) if adjusted else output)


def range_note(m: ScaleModel, perf: str, lichess: int) -> str | None:
    """Why ``lichess`` (rating points in ``perf``) through ``m`` is not a plain estimate, or
    ``None`` when it lies inside the model's fitted range (or the source states none):
    ``"below the model's range (1665)"``, ``"beyond the model's fitted range (FIDE
    1000–2900)"``, ``"the model's 950 is below FIDE's floor of the time (1000)"``."""
    c = convert(m, perf, lichess)
    if m.lichess_range is not None:
        low, high = m.lichess_range
        if lichess < low:
            return f"below the model's range ({low})"
        if lichess > high:
            return f"beyond the model's fitted range (Lichess {low}–{high})"
    if c.output is not None and c.rating is None:
        return f"the model's {c.output} is below FIDE's floor of the time ({OLD_FLOOR})"
    if m.fide_range is not None and c.output is not None:
        low, high = m.fide_range
        if not low <= c.output <= high:
            return f"beyond the model's fitted range (FIDE {low}–{high})"
    if c.rating is not None and c.rating > HIGHEST_FIDE:
        return f"beyond any FIDE rating ever published ({HIGHEST_FIDE}): far outside the fit"
    return None


def fide_rating(m: ScaleModel, perf: str, lichess: int) -> int | None:
    """The estimated FIDE rating (today's scale) of ``lichess`` under ``m``; ``None`` =
    unrated. See :func:`convert`."""
    return convert(m, perf, lichess).rating
