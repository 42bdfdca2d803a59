"""The strength in the moves on the dashboard's pages: the cached strength report, one game's
accuracy, ACPL, levels, turning point (with its board) and eval graph, and the panel that
starts ``analyse`` for the selected player and perf with a progress bar. Everything comes
from :mod:`tracker.api`."""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass
from typing import Any, Final

import streamlit as st
import strength_charts
import ui

from tracker import api
from tracker.api import GameStrength, PlayerStrength, TrackerError

#: Seconds between two progress-bar updates.
PROGRESS_EVERY: Final = 0.25
RAPID_NOTE: Final = ("Levels are on the Lichess scale of the perf, as a 10–90 % range, from "
                     "the moves and the clock setting (never a rating).")


def analysed_key(user_id: str) -> tuple[tuple[str, int], ...]:
    """The player's analysed games per perf now (part of every strength cache key: a local
    analysis adds evals without changing the games)."""
    try:
        return tuple(api.analysed_perfs(user_id, db=ui.store()).items())
    except TrackerError:
        return ()


@st.cache_resource(show_spinner=False, max_entries=8)
def _player_strength(url: str, version: ui.DataVersion, analysed: tuple[tuple[str, int], ...],
                     user_id: str, perf: str) -> PlayerStrength | None:
    if dict(analysed).get(perf, 0) == 0:
        return None
    return api.strength(user_id, db=ui.store(), perf=perf)


def player_strength(user_id: str, perf: str) -> PlayerStrength | None:
    """The player's strength report in ``perf`` (cached), ``None`` without analysed games."""
    try:
        return _player_strength(ui.db_url(), ui.data_version(), analysed_key(user_id),
                                user_id, perf)
    except TrackerError as exc:
        st.warning(str(exc))
        return None


def show_game(game_id: str, color: str) -> None:
    """One game's strength: both sides' accuracy, ACPL, judgments and level; the turning
    point of ``color`` with its board; the eval graph. A game without evals says how to get
    them."""
    try:
        game = api.strength_game(game_id, db=ui.store())
    except api.NoAnalysisError:
        st.info("No evals for this game yet: Lichess did not analyse it. "
                + ("Analyse the player's games with the tracker command where the database "
                   "is kept" if ui.read_only() else
                   "Analyse the player's games with Stockfish below")
                + " (or import them again from Lichess after requesting a computer analysis "
                "there).")
        return
    st.markdown("#### Strength in the moves")
    source = game.engine or "Lichess's server analysis"
    st.caption(f"Evals: {ui.md(source)}, {game.coverage_text}. {RAPID_NOTE}")
    if not game.covered:
        st.warning(f"Partial analysis: {game.coverage_text}. No accuracy, ACPL or level is "
                   "shown for it, and it counts in no month's level.")
    cols = st.columns(2)
    for col, side_color in zip(cols, ("white", "black"), strict=True):
        s = game.side(side_color)  # type: ignore[arg-type]
        who = s.name or s.user_id or "?"
        col.markdown(f"**{side_color.capitalize()}: {ui.md(who)}** (Lichess {s.rating or '?'})")
        a, c = col.columns(2)
        a.metric("Accuracy", "—" if s.accuracy is None else f"{s.accuracy}%",
                 help="Lichess's game accuracy, from the Win% lost move by move.")
        c.metric("ACPL", "—" if s.acpl is None else str(s.acpl),
                 help="Average centipawn loss, as Lichess computes it.")
        # The range under the estimate, as the Overview's band under the rating: a metric's
        # value is cut short where the column is narrow ("2691 (2691–…" at 800 px).
        col.metric("Level shown", "—" if s.level is None else str(s.level.estimate),
                   help="The level this game's moves show: estimate, its 10–90 % range under "
                        "it, on the Lichess scale of the perf. The rating is never an input.")
        if s.level is not None:
            col.caption(f"10–90 % range {s.level.low}–{s.level.high}")
        col.caption(f"{api.plural(s.inaccuracy, 'inaccuracy')} (?!), "
                    f"{api.plural(s.mistake, 'mistake')} (?), "
                    f"{api.plural(s.blunder, 'blunder')} (??)"
                    + (" computed from the evals by Lichess's thresholds (the file carried no "
                       "judgments: Lichess may count fewer)" if s.counts_computed else "")
                    + (f"; {s.level.note}" if s.level is not None and s.level.note else ""))
    _turning_point(game, color)
    st.plotly_chart(strength_charts.eval_figure(game, _turning_ply(game, color)),
                    key=f"eval_{game.id}", config={"displaylogo": False})


def _turning_ply(game: GameStrength, color: str) -> int | None:
    point = game.side(color).turning_point  # type: ignore[arg-type]
    return None if point is None else point.ply


def _turning_point(game: GameStrength, color: str) -> None:
    point = game.side(color).turning_point  # type: ignore[arg-type]
    st.markdown(f"**The game:** {game.turn.label}")
    if point is None:
        st.caption(f"No move of {color} has an eval: no turning point.")
        return
    board, words = st.columns([2, 3])
    board.image(game.board_before(point.ply, color), caption="Before the turning point: "  # type: ignore[arg-type]
                "the move played in red, the engine's better move in green")
    best = game.best_san(point.ply)
    words.markdown(f"**Turning point for {color}: {point.notation}** — Win% "
                   f"{point.win_before:.0f} → {point.win_after:.0f}")
    if best and best != point.san:
        words.markdown(f"Better was **{best}**.")


def eta_text(done: int, total: int, seconds: float) -> str:
    """The progress line: games done of the total, the rate so far and the time left at that
    rate (``seconds`` since the start)."""
    text = f"Analysed {done} of {total} games"
    if done >= total:
        return text
    if done == 0 or seconds <= 0:
        return text + " · estimating the time left…"
    rate = done / seconds
    left = round((total - done) / rate)
    hours, rest = divmod(left, 3600)
    minutes, secs = divmod(rest, 60)
    eta = (f"{hours} h {minutes:02d} min" if hours else
           f"{minutes} min {secs:02d} s" if minutes else f"{secs} s")
    return text + f" · {rate:.2f} games/s · about {eta} left"


def analyse_panel(user_id: str, perf: str) -> None:
    """Start ``tracker analyse`` for the player and perf, with a progress bar, the time left
    and a Stop button (the games finished are kept). Absent when the database is read-only.

    The analysis runs in a thread of its own (:class:`_Running`, kept in the session) while
    the script redraws the bar. A click on Stop starts a new run of the script and stops this
    one at its next redraw; the new run finds the analysis still in the session (a run that
    reaches its end takes it out), sets its ``stop`` event, waits for the engines to close
    and shows the partial summary."""
    if ui.read_only():  # no engine for visitors: the API refuses too, before any search
        return
    with st.expander(f"Analyse {ui.md(user_id)}'s {perf} games with Stockfish"):
        st.caption("Games without evals get a local engine's: a fixed number of nodes per "
                   "position, one engine process per job. Games Lichess analysed are never "
                   "analysed again; every finished game is kept if you stop.")
        with st.form(f"analyse_{user_id}_{perf}"):
            n, jobs, nodes = st.columns(3)
            last = n.number_input("Most recent games", min_value=1, value=20, step=10)
            cores = api.default_jobs()  # tracker analyse's own default: one job a core
            workers = jobs.number_input("Jobs (engine processes)", min_value=1,
                                        max_value=max(cores, os.cpu_count() or 1), value=cores)
            budget = nodes.number_input("Nodes per position", min_value=1_000,
                                        max_value=10_000_000, value=api.default_nodes(),
                                        step=50_000)
            go = st.form_submit_button("Analyse", icon=":material/memory:")
        key = f"analyse_running_{user_id}_{perf}"
        before: _Running | None = st.session_state.pop(key, None)
        if before is not None:  # a run that did not reach its end: Stop, or another click
            before.stop.set()
            before.thread.join(timeout=60)
            summary = before.state.get("summary")
            st.warning(ui.md("Stopped: " + (
                summary.line() if summary is not None else
                f"{before.state['done']} of {before.state['total'] or 0} games analysed, "
                "every one kept")))
        if go:
            _run_analyse(user_id, perf, int(last), int(budget), int(workers), key)


@dataclass
class _Running:
    """An analysis started by the panel: its thread, its stop event, what it reported
    (``done``, ``total``, then ``summary`` or ``error``)."""

    thread: threading.Thread
    stop: threading.Event
    state: dict[str, Any]


def _run_analyse(user_id: str, perf: str, last: int, nodes: int, jobs: int, key: str) -> None:
    """The run of :func:`analyse_panel` (see there)."""
    st.button("Stop", key=f"analyse_stop_{user_id}_{perf}", icon=":material/stop:",
              help="Stop the analysis: every game finished so far is kept.")
    bar = st.progress(0.0, text="Starting the engine…")
    stop = threading.Event()
    state: dict[str, Any] = {"done": 0, "total": None}
    db = ui.store()

    def run() -> None:
        try:
            state["summary"] = api.analyse(
                user_id, db=db, perf=perf, last=last, nodes=nodes, jobs=jobs, stop=stop,
                progress=lambda done, total: state.update(done=done, total=total))
        except TrackerError as exc:
            state["error"] = exc
        except Exception as exc:  # shown in one line, as any error on the page
            state["error"] = f"{type(exc).__name__}: {exc}"

    started = time.monotonic()
    thread = threading.Thread(target=run, name="tracker-dashboard-analyse", daemon=True)
    st.session_state[key] = _Running(thread, stop, state)  # for the run a Stop starts
    thread.start()
    try:
        while thread.is_alive():
            thread.join(PROGRESS_EVERY)
            total = state["total"]
            if total is not None:  # a click on Stop ends this script run here
                bar.progress(state["done"] / total if total else 1.0,
                             text=eta_text(state["done"], total, time.monotonic() - started))
    except BaseException:
        stop.set()  # the page left or Stop: no engine runs on unseen
        raise
    st.session_state.pop(key, None)
    if "error" in state:
        st.error(ui.md(state["error"]))
        return
    summary = state["summary"]
    (st.success if summary.status == "complete" else st.warning)(ui.md(summary.line()))
