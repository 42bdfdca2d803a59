"""``tracker group calibrate``: the published models measured on a club whose FIDE ratings the
local Lichess makes from a known line (FIDE = 300 + 0.75 × Lichess + noise, σ 15), the club
line recovered, the refusal below 8 members, and ``--scale club:NAME`` in the replay."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import pytest

from tests.club_roster import Roster, make_roster, serve_roster
from tests.lichess_server import LichessServer
from tracker import api

A, B, NOISE = 300.0, 0.75, 15.0


def _club(tmp: Path, roster: Roster) -> str:
    db = str(tmp / "club.db")
    with LichessServer() as server:
        serve_roster(server, roster)
        csv = tmp / "roster.csv"
        csv.write_text(roster.csv(), encoding="utf-8")
        api.group_create("club", db=db)
        api.group_add("club", from_csv=csv, db=db)
        assert not api.sync("club", db=db, base_url=server.url).failed
    return db


@pytest.fixture(scope="module")
def roster() -> Roster:
    return make_roster(12, linked=10, a=A, b=B, noise=NOISE)


@pytest.fixture(scope="module")
def club(tmp_path_factory: pytest.TempPathFactory, roster: Roster) -> Iterator[str]:
    yield _club(tmp_path_factory.mktemp("club"), roster)


def _half_away(x: float) -> int:
    return int(Decimal(repr(x)).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def _lebowitz_blitz(x: int) -> int:
    """shared/spec/SCALE.md: 78.6 + 0.804x, rounded, then FIDE's March 2024 adjustment."""
    out = int((Decimal("78.6") + Decimal("0.804") * x).quantize(Decimal(1), ROUND_HALF_UP))
    return _half_away(out + 0.4 * (2000 - out)) if 1000 <= out < 2000 else out


def test_calibration_recovers_the_line_and_measures_the_models(club: str,
                                                               roster: Roster) -> None:
    c = api.group_calibrate("club", "blitz", db=club)
    assert (c.members, c.linked, c.used, len(c.data)) == (12, 10, 10, 120)
    assert c.left_out == ["member11: no FIDE id linked", "member12: no FIDE id linked"]
    assert c.refused is None and c.club is not None
    fit = c.club
    a, b = float(fit.intercept), float(fit.slope)
    assert abs(b - B) <= 0.02
    for x in (1300, 1800, 2300):  # the line within the noise over the club's range
        assert abs(a + b * x - (A + B * x)) <= NOISE
    assert (fit.n, fit.points) == (10, 120)
    lo = min(r for p in roster.linked() for r in p.monthly.values())
    hi = max(r for p in roster.linked() for r in p.monthly.values())
    assert fit.lichess_range == (lo, hi)
    assert 5 <= fit.mae <= NOISE and fit.mae <= fit.loo_mae <= 1.5 * NOISE
    # each published model's signed gap, computed here from the roster itself
    members = []
    for p in roster.linked():
        gaps = [_lebowitz_blitz(p.monthly[m]) - p.fide_list[m] for m in p.monthly]
        members.append(sum(gaps) / len(gaps))
    by = {g.key: g for g in c.gaps}
    assert [g.key for g in c.gaps] == ["lebowitz", "mathtuition", "lichess"]
    assert by["lebowitz"].signed == pytest.approx(sum(members) / len(members))
    assert by["lebowitz"].members == 10 and by["lebowitz"].unrated == 0
    baseline = [sum(p.monthly[m] - p.fide_list[m] for m in p.monthly) / 12
                for p in roster.linked()]
    assert by["lichess"].signed == pytest.approx(sum(baseline) / 10)
    assert c.club_gap is not None and abs(c.club_gap.signed or 0) < 5
    assert api.club_scales(db=club) == [("club:club", ("blitz",))]


def test_replay_on_the_club_scale(club: str, roster: Roster) -> None:
    fit = api.group_calibrate("club", "blitz", db=club).club
    assert fit is not None
    report = api.replay("member03", "blitz", db=club, scale="club:club")
    assert report.scale_label == "FIDE scale (club model of club (n=10 members))"
    assert report.model is not None and report.model.key == "club:club"
    current = roster.players[2].monthly["2025-02"]
    expected = _half_away(float(Decimal(fit.intercept) + Decimal(fit.slope) * current))
    assert report.conversions["club:club"].rating == expected
    assert "lebowitz" in report.conversions
    j = report.to_json()
    assert (j["scale"], j["model"]) == ("club:club", "club:club")
    # the engine got the opponents through the club line: another line, other periods
    other = api.replay("member03", "blitz", db=club, scale="lebowitz")
    assert [p.result.rating_after for p in report.periods] != [
        p.result.rating_after for p in other.periods]
    # never part of "all"
    assert "club:club" not in [m.key for m in api.replay("member03", "blitz", db=club,
                                                         scale="all").models]


def test_club_scale_as_a_saved_setting(club: str) -> None:
    api.group_calibrate("club", "blitz", db=club)
    api.settings("member04", db=club, scale="club:club")
    try:
        report = api.replay("member04", "blitz", db=club)
        assert report.model is not None and report.model.key == "club:club"
    finally:
        api.settings("member04", db=club, scale="lichess")


def test_club_scale_errors(club: str) -> None:
    with pytest.raises(api.ClubModelError, match="club:club has no rapid model"):
        api.replay("member03", "rapid", db=club, scale="club:club")
    with pytest.raises(api.ClubModelError, match="no group named 'nope'"):
        api.replay("member03", "blitz", db=club, scale="club:nope")
    with pytest.raises(api.SettingsError, match="club:GROUP"):
        api.replay("member03", "blitz", db=club, scale="club:")


def _tracker(db: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tracker.cli.commands", "--db", db, *args],
                          capture_output=True, text=True, check=False)


def test_cli_calibrate_and_replay(club: str) -> None:
    done = _tracker(club, "group", "calibrate", "club", "--perf", "blitz")
    assert done.returncode == 0, done.stderr
    assert "club model: FIDE = " in done.stdout and "(n=10 members, 120 member-months" in \
        done.stdout
    assert "lebowitz" in done.stdout and "mathtuition" in done.stdout
    # The last column counts member-months, not members: its header said "unrated".
    header = next(line for line in done.stdout.splitlines() if "signed gap" in line)
    assert header.split("   ")[-1].strip() == "months left out"
    assert ("months left out: member-months the model cannot place" in done.stdout)
    replay = _tracker(club, "replay", "member03", "--perf", "blitz", "--scale", "club:club")
    assert replay.returncode == 0, replay.stderr
    assert "club model of club (n=10 members)" in replay.stdout
    bad = _tracker(club, "replay", "member03", "--perf", "blitz", "--scale", "club:nope")
    assert bad.returncode == 2 and "no group named 'nope'" in bad.stderr


def test_seven_linked_members_are_refused_with_the_reason(tmp_path: Path) -> None:
    db = _club(tmp_path, make_roster(12, linked=7, a=A, b=B, noise=NOISE))
    c = api.group_calibrate("club", "blitz", db=db)
    assert c.club is None
    assert c.refused == ("7 members of club with a linked FIDE id and blitz and FIDE ratings "
                         "in the same months since 2024-03; a club model needs at least 8")
    assert c.gaps[0].key == "lebowitz" and c.gaps[0].members == 7  # still measured
    assert api.club_scales(db=db) == []
    cli = _tracker(db, "group", "calibrate", "club", "--perf", "blitz")
    assert cli.returncode == 1
    assert cli.stderr == f"no club model: {c.refused}\n"


def test_dashboard_picker_offers_the_club_model(club: str,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    from dashboard import charts
    from tests.test_dashboard import assert_clean, chart_traces, open_app

    api.group_calibrate("club", "blitz", db=club)
    at = open_app(Path(club), monkeypatch, query={"player": "member03", "perf": "blitz",
                                                  "scale": "club:club"})
    assert_clean(at)
    picker = next(s for s in at.sidebar.selectbox if s.label == "Scale")
    assert picker.value == "club:club"
    # the club model after "all" and the published models, not in "all"; the raw numbers last
    assert picker.options == ["FIDE scale: all models (median)", "lebowitz alone",
                              "mathtuition alone", "club model: club",
                              "Lichess scale (raw numbers)"]
    label = "FIDE scale (club model of club (n=10 members))"
    assert charts.fide_name(label) in chart_traces(at)


def test_a_line_that_cannot_be_fitted_is_refused_not_a_traceback(
        store: object, monkeypatch: pytest.MonkeyPatch) -> None:
    from tracker.report import calibration
    from tracker.report.calibration import MemberMonth

    api.group_create("flat", db=store)  # type: ignore[arg-type]
    api.group_add("flat", [f"m{i}x" for i in range(8)], db=store)  # type: ignore[arg-type]
    monkeypatch.setattr(calibration, "_member_months", lambda _s, uid, _p, _fide=None: (
        [MemberMonth(uid, "2024-05", 1500, 1400 + len(uid))], ""))  # all at Lichess 1500
    c = api.group_calibrate("flat", "blitz", db=store)  # type: ignore[arg-type]
    assert c.club is None and c.used == 8
    assert c.refused == "no line can be fitted: a line needs at least two points at different x"
