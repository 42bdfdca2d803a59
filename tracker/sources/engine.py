"""A local UCI engine (Stockfish) as a source of evals: positions in, evals out, no database.

One :class:`LocalEngine` is one engine process (python-chess :mod:`chess.engine`), searching
each position for a fixed number of nodes on one thread with a fresh hash per game (kept
between the plies of the game: python-chess's ``game`` key), so that a game's evals depend on
the game and the budget only, not on which process analysed it or in which order.
:meth:`LocalEngine.analyse_game` gives, for every ply, the eval after the move (White's view,
centipawns or mate) and the engine's best move in the position before it (UCI): the same shape
as Lichess's ``analysis[]``, with ``best`` on every ply. Each position is searched once: its
search gives the eval after the move that led to it and the best move before the next one.
The checkmated final position has no eval and no entry (as on Lichess); a stalemate or a dead
draw by insufficient material is 0 (no search); where the engine has found a forced mate and
the game plays its move, the next position (its eval the same mate, its best move the reply
the engine expected) is not searched.

The engine process runs in its own process group, so a Ctrl+C at the terminal reaches tracker
alone, which then closes its engines itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import chess
import chess.engine

from tracker.analysis.engine_calibration import calibration_for
from tracker.core import config
from tracker.core.errors import TrackerError
from tracker.core.evals import PlyEval
from tracker.core.records import Analysis
from tracker.sources.game_text import legal_moves
from tracker.sources.ndjson import MAX_EVAL

#: Where Debian's package ``stockfish`` installs the engine (not on a user's PATH).
DEBIAN_STOCKFISH: Final = "/usr/games/stockfish"
#: Nodes searched per position by default: ~10-15 ms a position for Stockfish 15.1 on a free
#: core, ~0.8 s for a 64-ply blitz game. The smallest budget whose calibrated level reads as
#: close to Lichess's evals as the next larger one's (docs/performance.md has the curve);
#: the newest tracker/analysis/models/engine-calibration-<N>.json must hold a calibration for it.
DEFAULT_NODES: Final = 10_000
#: The engine's hash table per process (MB): ample for 100k-node searches, small enough for
#: one process per core on a small machine.
HASH_MB: Final = 16
#: The limits a ``--nodes`` may take: below 1,000 the evals are noise; above 100M a position
#: takes minutes.
MIN_NODES: Final = 1_000
MAX_NODES: Final = 100_000_000
#: The slowest search a position is given time for (nodes a second): Stockfish searches
#: ~1M a second on a busy core, twenty times this.
SLOWEST_NPS: Final = 50_000
#: Seconds a position is given beyond ``nodes / SLOWEST_NPS``: an engine silent for longer
#: is hung, and the run stops with one line naming it.
GRACE_S: Final = 10.0
#: Seconds a program is given to answer ``uci`` with ``uciok`` (python-chess's default).
START_S: Final = 10.0

# python-chess logs what an engine's answer fails to parse (an illegal ``pv``), with its
# traceback, to stderr where logging is not set up: the analysis says it in one line instead.
logging.getLogger("chess.engine").addHandler(logging.NullHandler())
logging.getLogger("chess.engine").propagate = False


class EngineMissingError(TrackerError):
    """No UCI engine where tracker looks for one (exit code 1, one line)."""


class EngineFailedError(TrackerError):
    """The engine process died or answered nonsense."""


#: How the failure of a program that is no UCI engine begins: a rerun does not mend it.
NOT_AN_ENGINE: Final = "not an engine: "


def failure_message(failure: str) -> str:
    """A run's message after its engine failed: ``failure``, then "run the same command
    again to go on", except after a program that is no UCI engine (:data:`NOT_AN_ENGINE`)."""
    if failure.startswith(NOT_AN_ENGINE):
        return failure
    return f"{failure}; run the same command again to go on"


def find_engine(path: str | os.PathLike[str] | None = None) -> str:
    """The engine's executable: ``path`` if given, else ``$TRACKER_ENGINE``, else ``stockfish``
    on the PATH, else Debian's ``/usr/games/stockfish``. Raises EngineMissingError (one line,
    naming ``apt-get install stockfish``)."""
    given = path if path is not None else config.engine()
    if given:
        found = shutil.which(os.fspath(given))
        if found is None and os.path.isfile(given):  # there, but no program: /etc/passwd
            raise EngineMissingError(f"{NOT_AN_ENGINE}{os.fspath(given)} (not executable): "
                                     "give the path of a UCI engine such as Stockfish")
        if found is None:
            raise EngineMissingError(f"no engine at {os.fspath(given)}: give the path of a UCI "
                                     "engine such as Stockfish (apt-get install stockfish)")
        return found
    found = shutil.which("stockfish") or shutil.which(DEBIAN_STOCKFISH)
    if found is None:
        raise EngineMissingError("Stockfish is not installed: install it with `apt-get install "
                                 "stockfish` (Debian/Ubuntu), or name a UCI engine with "
                                 "--engine PATH")
    return found


@dataclass(slots=True)
class EngineTime:
    """What the engine spent, as it reported it: ``seconds`` searching (the engine's own
    ``time``), ``nodes`` searched, ``positions`` searched; ``wall`` seconds of the calls as
    tracker saw them (the difference is the protocol's and python-chess's share);
    ``followed``: positions not searched, their eval certain (a forced mate already found
    that the game follows)."""

    seconds: float = 0.0
    nodes: int = 0
    positions: int = 0
    wall: float = 0.0
    followed: int = 0

    def add(self, other: EngineTime) -> None:
        self.seconds += other.seconds
        self.nodes += other.nodes
        self.positions += other.positions
        self.wall += other.wall
        self.followed += other.followed


@dataclass(frozen=True, slots=True)
class EngineGame:
    """A game's local analysis and what it cost."""

    analysis: Analysis
    spent: EngineTime


_INFO: Final = chess.engine.INFO_BASIC | chess.engine.INFO_SCORE


#: The longest engine name and version stored with an analysis (the columns' widths); an
#: engine that names itself at greater length is stored cut to these.
ENGINE_NAME_MAX: Final = 64
ENGINE_VERSION_MAX: Final = 32


def split_engine_name(name: str) -> tuple[str, str]:
    """``"Stockfish 15.1"`` → ``("Stockfish", "15.1")``; a name without a version → (name, "").
    Each part at most :data:`ENGINE_NAME_MAX` / :data:`ENGINE_VERSION_MAX` characters."""
    head, _, tail = name.strip().rpartition(" ")
    if head and any(ch.isdigit() for ch in tail):
        return head[:ENGINE_NAME_MAX], tail[:ENGINE_VERSION_MAX]
    return name.strip()[:ENGINE_NAME_MAX], ""


class LocalEngine:
    """One engine process. Use as a context manager (the process is closed at the end).

    ``nodes``: nodes per position; ``follow_mates``: where the engine has found a forced mate
    and the game plays its move, the next position is not searched (its eval is the mate, one
    move nearer when the mating side moved; its best move the reply the engine expected). Its
    analyses record the calibration fitted for the engine's version and this budget
    (``calibration``, ``None`` where none is).
    Raises EngineMissingError where no engine is found, EngineFailedError where it does not
    start.
    """

    def __init__(self, nodes: int = DEFAULT_NODES, path: str | os.PathLike[str] | None = None,
                 hash_mb: int = HASH_MB, *, follow_mates: bool = True) -> None:
        self.nodes = nodes
        self.follow_mates = follow_mates
        self.path = find_engine(path)
        try:
            self._engine = chess.engine.SimpleEngine.popen_uci(self.path, setpgrp=True,
                                                               timeout=START_S)
        except (chess.engine.EngineError, OSError) as exc:  # TimeoutError is an OSError
            # It runs but never says ``uciok`` (it exits, or answers something else).
            why = str(exc) or f"no answer within {START_S:.0f} s"
            raise EngineFailedError(f"{NOT_AN_ENGINE}{self.path} does not answer as a UCI "
                                    f"engine ({why})") from None
        try:
            self._engine.configure({"Threads": 1, "Hash": hash_mb})
            if "UCI_AnalyseMode" in self._engine.options:  # searches to analyse, not to play
                self._engine.configure({"UCI_AnalyseMode": True})
        except (chess.engine.EngineError, OSError) as exc:
            raise EngineFailedError(f"the engine {self.path} did not start: {exc}") from None
        self.name, self.version = split_engine_name(self._engine.id.get("name", "engine"))
        found = calibration_for(self.name, self.version, nodes)
        self.calibration = found.id if found is not None else None
        #: What python-chess could not make of the engine's last answers (an illegal
        #: ``bestmove``), kept for the one line that stops the run instead of a traceback.
        self._nonsense: str | None = None
        self._engine.protocol.loop.set_exception_handler(self._keep_nonsense)

    def _keep_nonsense(self, _loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        exc = context.get("exception")
        self._nonsense = str(exc) if exc is not None else str(context.get("message"))

    def __enter__(self) -> LocalEngine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Quit the engine (killed if it does not answer within a second)."""
        with contextlib.suppress(Exception):  # already dead: nothing to close
            self._engine.close()

    def analyse_game(self, game_id: str, sans: Sequence[str], initial_fen: str | None = None
                     ) -> EngineGame:
        """Evals for every ply of the game whose moves (SAN) are ``sans``, from the standard
        start or ``initial_fen``. Raises ValueError for an illegal move (``move 14.Qh6 is
        illegal there``; the moves before it are not returned: a game is analysed whole or not
        at all), EngineFailedError when the engine dies."""
        board = chess.Board(initial_fen) if initial_fen else chess.Board()
        moves = legal_moves(board.copy(), sans)
        spent = EngineTime()
        evals: list[PlyEval] = []
        (_, mate), pv = self._search(board, game_id, spent)
        for move in moves:
            best = pv[0].uci() if pv else None
            white_moved = board.turn == chess.WHITE
            board.push(move)
            if board.is_checkmate():
                break  # the mated position has no eval, and no entry, as on Lichess
            if board.is_stalemate() or board.is_insufficient_material():
                evals.append(PlyEval(0, None, best))
                break
            nearer = _mate_after(mate, white_moved)
            if self.follow_mates and nearer and len(pv) >= 2 and move == pv[0]:
                # a forced mate already found, and the game plays the move the engine chose:
                # the next position's eval is certain (the same mate, one move nearer once
                # the mating side has moved) and its best move the reply the engine expected;
                # no search
                mate = nearer
                evals.append(PlyEval(None, mate, best))
                pv = pv[1:]
                spent.followed += 1
                continue
            (cp, mate), pv = self._search(board, game_id, spent)
            evals.append(PlyEval(cp, mate, best))
        analysis = Analysis(tuple(evals), "engine", self.name, self.version, self.nodes,
                            calibration=self.calibration)
        return EngineGame(analysis, spent)

    def _search(self, board: chess.Board, game_id: str, spent: EngineTime
                ) -> tuple[tuple[int | None, int | None], list[chess.Move]]:
        """((cp, mate) White's view, the engine's best move and expected reply) of one
        position. Raises EngineFailedError (one line naming the engine) when it dies, gives no
        answer within :meth:`position_limit_s`, or answers an eval beyond ``MAX_EVAL``."""
        started = time.perf_counter()
        limit_s = self.position_limit_s()
        engine = f"the engine {self.name} {self.version}".rstrip() + f" ({self.path})"
        try:
            # ``play``: the best move and the expected reply from ``bestmove … ponder …``, the
            # score from the info lines, without parsing every line's principal variation (a
            # third of python's time per search at small budgets); SimpleEngine's own calls
            # wait forever on a search bounded by nodes alone
            protocol = self._engine.protocol
            search = protocol.play(board, chess.engine.Limit(nodes=self.nodes),
                                   game=game_id, info=_INFO)
            bounded = asyncio.wait_for(search, limit_s)
            try:
                future = asyncio.run_coroutine_threadsafe(bounded, protocol.loop)
            except BaseException:  # the engine was closed meanwhile: nothing will run them
                bounded.close()
                search.close()
                raise
            played = future.result()
        except TimeoutError:
            why = f" (it answered nonsense: {self._nonsense})" if self._nonsense else ""
            raise EngineFailedError(
                f"{engine} gave no answer within {limit_s:.0f} s for a position of game "
                f"{game_id} ({self.nodes:,} nodes){why}: stopped") from None
        except (chess.engine.EngineError, chess.engine.EngineTerminatedError) as exc:
            raise EngineFailedError(f"{engine} stopped: {exc}") from None
        spent.wall += time.perf_counter() - started
        info = played.info
        spent.seconds += float(info.get("time", 0.0))
        spent.nodes += int(info.get("nodes", 0))
        spent.positions += 1
        score = info.get("score")
        pv = [m for m in (played.move, played.ponder) if m is not None]
        if score is None:
            return (None, None), pv
        white = score.white()
        cp, mate = white.score(), white.mate()
        if abs(cp or 0) > MAX_EVAL or abs(mate or 0) > MAX_EVAL:
            value = str(cp if mate is None else f"mate {mate}")
            raise EngineFailedError(
                f"{engine} answered an eval out of range ({value[:20]}"
                f"{'…' if len(value) > 20 else ''}) for a position of game {game_id}: stopped")
        return (cp, mate), pv

    def position_limit_s(self) -> float:
        """Seconds one position may take before the engine counts as hung:
        ``nodes / SLOWEST_NPS + GRACE_S`` (12 s for 100,000 nodes)."""
        return self.nodes / SLOWEST_NPS + GRACE_S


def _mate_after(mate: int | None, white_moved: bool) -> int | None:
    """The mate (White's view, moves) after a move along its line: one move nearer when the
    mating side moved, the same when the other did; ``None`` without a mate (or where the
    move would have to mate, which ends the game)."""
    if not mate:
        return None
    nearer = mate - (1 if mate > 0 else -1) if (mate > 0) == white_moved else mate
    return nearer or None
