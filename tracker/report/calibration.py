"""A group's calibration: how the published scale models do on the members who have a real
FIDE rating, and a **club model** fitted on them the way the published ones were fitted.

The data: for every member with a linked FIDE id and games in the perf, every month from
:data:`SINCE` (today's FIDE scale, after the adjustment of 1 March 2024) in which they have
both a Lichess rating in the perf (after their last game of the month) and a FIDE standard
rating in force. Each member weighs the same (weight 1/months on each of their months), as
a player is one profile in the published fits.

- **published models**: per member, the mean of ``model(Lichess) − real FIDE`` (the models'
  output on today's scale, as the replay uses it) over their months; the signed mean gap
  and the mean absolute gap are the means over the members. ``lichess`` (the Lichess rating
  taken as the FIDE rating) is the simple baseline beside them.
- **club model**: one line per perf, ``FIDE = a + b × Lichess``, by least absolute
  deviations (:mod:`tracker.report.lad`, exact) on the weighted member-months; its leave-one-out
  error: each member's mean absolute error under the line fitted on the other members, the
  mean over members. Refused below :data:`MIN_MEMBERS` members. Stored with its data and
  date (:func:`tracker.store.groups.save_club_model`); ``club:NAME`` is then a scale like
  the others (:func:`club_scale_model`), never part of ``all``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any, Final

from tracker.core.errors import TrackerError
from tracker.core.perfs import perf_key
from tracker.fide.scale import Linear, ScaleModel, convert, models_for
from tracker.report.lad import FitError, lad_line
from tracker.report.saved_pass import player_pass
from tracker.report.settings import CLUB_PREFIX
from tracker.store import groups, queries
from tracker.store.db import Store
from tracker.store.fide import load_fide_link, months_in_force

#: Fewest members with a FIDE rating a club model is fitted on.
MIN_MEMBERS: Final = 8
#: The first month on today's FIDE scale (FIDE's adjustment of 1 March 2024).
SINCE: Final = "2024-03"
#: The baseline beside the models: the Lichess rating taken as the FIDE rating.
BASELINE: Final = "lichess"
#: Decimals kept of a club line (a model is data: decimal strings, read exactly).
INTERCEPT_PLACES: Final = Decimal("0.1")
SLOPE_PLACES: Final = Decimal("0.0001")


class ClubModelError(TrackerError, ValueError):
    """``--scale club:NAME`` names no fitted club model for the perf (exit code 2)."""

    exit_code = 2


@dataclass(frozen=True, slots=True)
class MemberMonth:
    """One member's month: Lichess rating in the perf after their last game of the month,
    FIDE standard rating in force that month (rating points)."""

    user: str
    month: str
    lichess: int
    fide: int


@dataclass(frozen=True, slots=True)
class ModelGap:
    """A model on the members: ``signed`` mean gap (model − real, rating points; positive =
    the model rates them higher than FIDE does), ``mean_abs`` gap, over ``members`` members;
    ``unrated``: member-months the model gave no FIDE rating (left out)."""

    key: str
    name: str
    signed: float | None
    mean_abs: float | None
    members: int
    unrated: int = 0


@dataclass(frozen=True, slots=True)
class ClubFit:
    """A fitted club line: ``FIDE = intercept + slope × Lichess`` (decimal strings), fitted on
    ``n`` members (``points`` member-months) over Lichess ``lichess_range`` and FIDE
    ``fide_range``; ``mae`` the in-sample mean absolute gap, ``loo_mae`` the leave-one-out
    one (means over members, rating points); ``fitted_at_ms`` ms since the epoch, UTC."""

    perf: str
    intercept: str
    slope: str
    n: int
    points: int
    lichess_range: tuple[int, int]
    fide_range: tuple[int, int]
    mae: float
    loo_mae: float
    fitted_at_ms: int = 0

    def estimate(self, lichess: int) -> int | None:
        """The club line's FIDE rating for ``lichess`` (rounded half away from zero)."""
        return convert(self.model("club"), self.perf, lichess).rating

    def model(self, group: str) -> ScaleModel:
        """The line as a :class:`~tracker.fide.scale.ScaleModel` (key ``club:GROUP``)."""
        date = datetime.fromtimestamp(self.fitted_at_ms / 1000, tz=UTC)
        lo, hi = self.lichess_range
        return ScaleModel(
            key=f"{CLUB_PREFIX}{group}",
            name=f"club model of {group} (n={self.n} members)",
            source=f"fitted by tracker group calibrate {group} on {date:%Y-%m-%d}",
            year=date.year,
            data=f"{self.n} members of {group} with a linked FIDE id, {self.points} "
                 f"member-months since {SINCE}; least absolute deviations",
            fits={self.perf: Linear(self.intercept, self.slope)},
            fitted_range=f"Lichess {self.perf} {lo}–{hi}",
            era="post-2024",
            caveat=f"fitted on {self.n} players only: leave-one-out mean error "
                   f"{self.loo_mae:.0f} points",
        )


@dataclass(frozen=True, slots=True)
class Calibration:
    """``tracker group calibrate``: the group, the perf, member counts (``members`` in the
    group, ``linked`` with a FIDE id linked, ``used`` with months in the data), the data, a
    gap per published model covering the perf (and the baseline), the club fit (``None`` when
    ``refused``, with the reason) and one line per member left out."""

    group: str
    perf: str
    members: int
    linked: int
    used: int
    data: list[MemberMonth] = field(default_factory=list)
    gaps: list[ModelGap] = field(default_factory=list)
    club: ClubFit | None = None
    club_gap: ModelGap | None = None
    refused: str | None = None
    left_out: list[str] = field(default_factory=list)


def _member_months(store: Store, user_id: str, perf: str, fide_id: int | None = None
                   ) -> tuple[list[MemberMonth], str]:
    """A member's months (see the module docstring), or ``[]`` and why. ``fide_id``: the
    group's FIDE id for the member; a link to another id is not the group's member's."""
    link = load_fide_link(store, user_id)
    if link is None:
        return [], "no FIDE id linked"
    if fide_id is not None and link.profile.fide_id != fide_id:
        return [], (f"FIDE id {fide_id} given, {link.profile.fide_id} linked: tracker sync "
                    "links the group's")
    if not link.lists["standard"]:
        return [], "no FIDE standard rating"
    if not queries.is_tracked(store, user_id):
        return [], "no games imported"
    lichess = player_pass(store, user_id, perf, count_provisional=False).monthly_last()
    if not lichess:
        return [], f"no {perf} games"
    fide = dict(months_in_force(link.lists["standard"], max(lichess)))
    out = [MemberMonth(user_id, m, r, fide[m]) for m, r in sorted(lichess.items())
           if m >= SINCE and m in fide]
    return out, "" if out else f"no month since {SINCE} with both a {perf} and a FIDE rating"


def _by_member(data: Sequence[MemberMonth]) -> dict[str, list[MemberMonth]]:
    out: dict[str, list[MemberMonth]] = defaultdict(list)
    for d in data:
        out[d.user].append(d)
    return out


def _mean(xs: Sequence[float]) -> float | None:
    return sum(xs) / len(xs) if xs else None


def model_gap(key: str, name: str, estimate: Any, data: Sequence[MemberMonth]) -> ModelGap:
    """The gap of ``estimate(lichess) -> FIDE rating | None`` on ``data`` (see
    :class:`ModelGap`): per member the mean over their months, then the mean over members."""
    signed: list[float] = []
    absolute: list[float] = []
    unrated = 0
    for months in _by_member(data).values():
        gaps = []
        for d in months:
            est = estimate(d.lichess)
            if est is None:
                unrated += 1
            else:
                gaps.append(est - d.fide)
        if gaps:
            signed.append(sum(gaps) / len(gaps))
            absolute.append(sum(abs(g) for g in gaps) / len(gaps))
    return ModelGap(key, name, _mean(signed), _mean(absolute), len(signed), unrated)


def _points(data: Sequence[MemberMonth]) -> list[tuple[float, float, float]]:
    """The fit's ``(x, y, weight)``: each member weighs 1 over their months."""
    counts = {u: len(ms) for u, ms in _by_member(data).items()}
    return [(float(d.lichess), float(d.fide), 1.0 / counts[d.user]) for d in data]


def _line(data: Sequence[MemberMonth]) -> tuple[str, str]:
    fit = lad_line(_points(data))
    return (str(Decimal(repr(fit.intercept)).quantize(INTERCEPT_PLACES)),
            str(Decimal(repr(fit.slope)).quantize(SLOPE_PLACES)))


def fit_club(perf: str, data: Sequence[MemberMonth]) -> ClubFit:
    """The club line on ``data`` with its figures (see the module docstring). Raises
    tracker.report.lad.FitError when every point has the same Lichess rating."""
    intercept, slope = _line(data)
    by = _by_member(data)
    loo: list[float] = []
    for user, months in by.items():
        rest = [d for d in data if d.user != user]
        a, b = _line(rest)
        line = Linear(a, b)
        loo.append(sum(abs(float(line(d.lichess) or 0) - d.fide) for d in months) / len(months))
    fit = ClubFit(perf, intercept, slope, len(by), len(data),
                  (min(d.lichess for d in data), max(d.lichess for d in data)),
                  (min(d.fide for d in data), max(d.fide for d in data)), 0.0,
                  sum(loo) / len(loo))
    gap = model_gap("club", "club", fit.estimate, data)
    return ClubFit(**{**asdict(fit), "mae": gap.mean_abs or 0.0})


def calibrate(store: Store, group: str, perf: str, *, save: bool = True,
              min_members: int = MIN_MEMBERS) -> Calibration:
    """Calibrate group ``group`` in ``perf`` (see the module docstring); with ``save``, a
    club model fitted is stored (replacing the perf's older one; a refused fit keeps it).
    Raises UnknownGroupError, PerfError."""
    perf = perf_key(perf)
    name = groups.check_name(group)
    members = groups.members(store, name)
    data: list[MemberMonth] = []
    left_out: list[str] = []
    linked = 0
    for m in members:
        months, why = _member_months(store, m.user_id, perf, m.fide_id)
        linked += why != "no FIDE id linked"
        data += months
        if not months:
            left_out.append(f"{m.username}: {why}")
    used = len(_by_member(data))
    gaps = [model_gap(mod.key, mod.name, lambda x, mod=mod: convert(mod, perf, x).rating,
                      data) for mod in models_for(perf)]
    gaps.append(model_gap(BASELINE, "the Lichess rating as the FIDE rating", lambda x: x,
                          data))
    if used < min_members:
        reason = (f"{used} member{'s' if used != 1 else ''} of {name} with a linked FIDE id "
                  f"and {perf} and FIDE ratings in the same months since {SINCE}; a club "
                  f"model needs at least {min_members}")
        return Calibration(name, perf, len(members), linked, used, data, gaps, None, None,
                           reason, left_out)
    try:
        fit = fit_club(perf, data)
    except FitError as exc:  # every member at one Lichess rating: no slope to fit
        return Calibration(name, perf, len(members), linked, used, data, gaps, None, None,
                           f"no line can be fitted: {exc}", left_out)
    if save:
        stamp = groups.save_club_model(store, name, perf, club_payload(fit, data))
        fit = ClubFit(**{**asdict(fit), "fitted_at_ms": stamp})
    club_gap = model_gap(f"{CLUB_PREFIX}{name}", fit.model(name).name, fit.estimate, data)
    return Calibration(name, perf, len(members), linked, used, data, gaps, fit, club_gap,
                       None, left_out)


def club_payload(fit: ClubFit, data: Sequence[MemberMonth]) -> dict[str, Any]:
    """What is stored of a club model: the fit's fields and its data."""
    out = asdict(fit)
    out.pop("fitted_at_ms")
    out["data"] = [asdict(d) for d in data]
    out["since"] = SINCE
    return out


def _fit_of(stored: groups.StoredClubModel) -> ClubFit:
    p = stored.payload
    return ClubFit(p["perf"], p["intercept"], p["slope"], p["n"], p["points"],
                   tuple(p["lichess_range"]), tuple(p["fide_range"]),
                   p["mae"], p["loo_mae"], stored.fitted_at_ms)


def club_fits(store: Store, group: str) -> list[ClubFit]:
    """Group ``group``'s stored club models, by perf. Raises UnknownGroupError."""
    return [_fit_of(s) for s in groups.load_club_models(store, groups.check_name(group))]


def is_club_scale(scale: str) -> bool:
    """Whether ``scale`` names a club model (``club:NAME``)."""
    return scale.startswith(CLUB_PREFIX)


def club_scale_model(store: Store, scale: str, perf: str) -> ScaleModel:
    """The club model ``scale`` (``club:NAME``) for ``perf``, as a scale model. Raises
    ClubModelError (exit 2: no such group, or no model fitted for the perf)."""
    name = scale.removeprefix(CLUB_PREFIX)
    try:
        fits = {f.perf: f for f in club_fits(store, name)}
    except (groups.UnknownGroupError, ValueError) as exc:
        raise ClubModelError(f"--scale {scale}: {exc}") from None
    fit = fits.get(perf)
    if fit is None:
        have = f" (fitted: {', '.join(fits)})" if fits else ""
        raise ClubModelError(f"{scale} has no {perf} model{have}: tracker group calibrate "
                             f"{name} --perf {perf}")
    return fit.model(name)


def club_scales(store: Store) -> list[tuple[str, tuple[str, ...]]]:
    """Every club model stored: ``[("club:NAME", perfs fitted), …]`` by group name."""
    out = []
    for g in groups.list_groups(store):
        perfs = tuple(s.perf for s in groups.load_club_models(store, g.name))
        if perfs:
            out.append((f"{CLUB_PREFIX}{g.name}", perfs))
    return out
