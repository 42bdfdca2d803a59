"""The strength report: what a player's analysed games show, from the stored evals and the
strength core (:mod:`tracker.analysis`): per game and side Lichess's accuracy, ACPL and
judgments, the level the game shows and its turning point; per month and for the last 20
games, the level the games show together. What ``tracker strength`` prints, its ``--json``
object and the dashboard show.

A local engine's analysis carries the engine's best move for every ply and no judgments: its
judgments are made here by Lichess's rule in full (a move is judged only where the engine
preferred another one; :func:`engine_judgments`). Lichess's own judgments are kept as they are.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from fractions import Fraction
from typing import Any, Final

import chess
import chess.svg
import msgspec
import zstandard

from tracker.analysis import engine_calibration
from tracker.analysis.board import board_flags
from tracker.analysis.engine_calibration import calibrated_evals, calibration_id
from tracker.analysis.formulas import game_summary, judge
from tracker.analysis.level import (
    FideLevel,
    GameFeatures,
    Level,
    LevelModel,
    fide_levels,
    grid_end,
    level_features,
    level_of_scores,
    levels_of_scores,
    load_level_model,
    model_note,
    on_training_scale,
    scores,
    set_fit_games,
)
from tracker.analysis.turning import GameTurn, TurningPoint, turning_points, win_curve
from tracker.core.codec import RawTextError
from tracker.core.errors import NoAnalysisError
from tracker.core.evals import START, Color, PlyEval
from tracker.core.records import BLACK_WINS, DRAW, WHITE_WINS, Analysis
from tracker.core.utc import utc_from_ms
from tracker.fide.scale import models_for
from tracker.report.game_view import read_moves
from tracker.sources.game_text import unreadable_moves
from tracker.store.analysis import (
    ANALYSABLE_VARIANTS,
    AnalysedGame,
    analysed_game,
    analysed_games,
)
from tracker.store.engine import Database
from tracker.store.games import game_source
from tracker.store.snapshots import STRENGTH, Key, save_only, saved_any

#: Points between the recent games' level together and the mean of their single levels
#: beyond which the report says why they differ (:meth:`PlayerStrength.recent_apart`).
APART: Final = 50
#: The set of "recent" games: the last this many analysed games.
RECENT_GAMES: Final = 20
#: How a local analysis's engine label ends where no engine calibration covers its engine and
#: budget (its levels read high).
UNCALIBRATED: Final = ", not calibrated"
#: The keys of one game's side in the ``--json`` objects, in order.
GAME_KEYS: Final = ("id", "played_at", "color", "rating", "accuracy", "acpl", "inaccuracy",
                    "mistake", "blunder", "counts_computed", "level", "turning_point",
                    "coverage")
#: A game counts as analysed when at least this share of its plies have an eval (the
#: checkmating ply, which has none, left out): its accuracy, ACPL and level are shown and it
#: counts in the months' and recent levels. Below it (an ``analysis[]`` of 3 entries for a
#: 125-ply game) none of these is shown, and the game says what it covers.
FULL_COVERAGE: Final = Fraction(9, 10)
#: Board size of the turning point (pixels; the SVG scales).
BOARD_SIZE: Final = 360
#: The version of the per-game results a player's report saves (:func:`player_strength`):
#: bump it whenever what :func:`game_strength` computes of a game changes.
SAVED_VERSION: Final = 4


@dataclass(slots=True, eq=False)
class _Plies:
    """What a game's report holds per ply (its evals as judged, White's Win% after each ply,
    the moves) and each side's level features. A report made from saved results holds the
    stored game instead (``stored``) and computes them on first use."""

    stored: AnalysedGame | None
    model: LevelModel | None
    evals: tuple[PlyEval, ...] = ()
    win: list[float | None] = field(default_factory=list)
    sans: tuple[str, ...] = ()
    features: dict[Color, GameFeatures] = field(default_factory=dict)

    def get(self) -> _Plies:
        if self.stored is not None:
            fresh = unlevelled(self.stored, self.model)._plies
            self.evals, self.win, self.sans = fresh.evals, fresh.win, fresh.sans
            self.features = fresh.features
            self.stored = None
        return self


@dataclass(frozen=True, slots=True)
class SideStrength:
    """One side of an analysed game: who (``user_id``, ``name``, Lichess ``rating`` at the
    start, for comparison only), Lichess's numbers (``accuracy`` % and ``acpl`` rounded half
    up, the judgment counts), the ``level`` the game shows (``None`` without a scored move)
    with its FIDE-scale readings, and the side's ``turning_point``: their move that lost the
    most Win%. ``counts_computed``: the evals carried no judgments (a PGN without glyphs), the
    counts are computed from them by Lichess's thresholds. ``moves``: the side's moves with an
    eval before and after (what the level reads); ``score``: the level model's score of them
    (rating points before the likelihood; ``None`` without a level), what the sets' levels
    combine, with ``set_score`` (the model's set fit's score, for sets of enough games);
    ``features``: what the level model reads."""

    color: Color
    user_id: str | None
    name: str | None
    rating: int | None
    accuracy: int | None
    acpl: int | None
    inaccuracy: int
    mistake: int
    blunder: int
    level: Level | None
    fide: tuple[FideLevel, ...]
    turning_point: TurningPoint | None
    _plies: _Plies = field(repr=False, compare=False)
    counts_computed: bool = False
    moves: int = 0
    score: float | None = field(default=None, repr=False)
    set_score: float | None = field(default=None, repr=False)

    @property
    def features(self) -> GameFeatures:
        """What the level model reads of this side's game."""
        return self._plies.get().features[self.color]


@dataclass(frozen=True, slots=True)
class GameStrength:
    """One analysed game: both sides, the game's turn, and the eval graph's data.

    ``played_at``: the game's start, aware UTC; ``source``: ``lichess`` or ``engine``;
    ``engine``: e.g. ``"Stockfish 15.1, 20,000 nodes, calibrated (stockfish-15.1-20000n-1)"``
    for a local analysis (``…, not calibrated`` where no calibration covers its engine and
    budget); ``evals``: one per ply with the judgments (made here for a local analysis), a
    local analysis's through its calibration (on Lichess's scale); ``win``: White's Win%
    after each ply (``None`` where no eval); ``sans``: the moves. In a player's report read
    from saved results, ``evals``, ``win``, ``sans`` and the sides' ``features`` are computed
    from the stored game when first read (the same values)."""

    id: str
    perf: str | None
    played_at: datetime
    source: str
    engine: str | None
    white: SideStrength
    black: SideStrength
    turn: GameTurn
    initial_fen: str | None

    #: Plies with an eval, and plies that need one (the game's, less a checkmating last ply).
    evaluated: int = 0
    plies: int = 0
    _plies: _Plies = field(default_factory=lambda: _Plies(None, None), repr=False,
                           compare=False)

    @property
    def evals(self) -> tuple[PlyEval, ...]:
        """One per ply, with the judgments (see the class)."""
        return self._plies.get().evals

    @property
    def win(self) -> list[float | None]:
        """White's Win% after each ply (``None`` where no eval)."""
        return self._plies.get().win

    @property
    def sans(self) -> tuple[str, ...]:
        """The moves (SAN)."""
        return self._plies.get().sans

    def side(self, color: Color) -> SideStrength:
        return self.white if color == "white" else self.black

    @property
    def covered(self) -> bool:
        """Whether the evals cover the game (:data:`FULL_COVERAGE` of its plies or more)."""
        return self.plies == 0 or Fraction(self.evaluated, self.plies) >= FULL_COVERAGE

    @property
    def uncalibrated(self) -> bool:
        """Whether its evals are a local engine's that no engine calibration covers (its levels
        read high): the engine label ends :data:`UNCALIBRATED`."""
        return self.source == "engine" and (self.engine or "").endswith(UNCALIBRATED)

    @property
    def coverage_text(self) -> str:
        """``"evals for 3 of 125 plies"``."""
        return f"evals for {self.evaluated} of {self.plies} pl{'y' if self.plies == 1 else 'ies'}"

    def board_before(self, ply: int, orientation: Color = "white") -> str:
        """The position before the move at ``ply`` (1-based) as python-chess SVG, the move
        played drawn as a red arrow and the engine's better move, where known, as a green
        one."""
        board = chess.Board(self.initial_fen) if self.initial_fen else chess.Board()
        for san in self.sans[: ply - 1]:
            board.push_san(san)
        played = board.parse_san(self.sans[ply - 1])
        arrows = [chess.svg.Arrow(played.from_square, played.to_square, color="#cc3333")]
        best = self.evals[ply - 1].best if ply - 1 < len(self.evals) else None
        if best:
            try:
                move = chess.Move.from_uci(best)
            except ValueError:
                move = None
            if move is not None and move != played:
                arrows.append(chess.svg.Arrow(move.from_square, move.to_square,
                                              color="#2e8b57"))
        return chess.svg.board(board, orientation=chess.WHITE if orientation == "white"
                               else chess.BLACK, arrows=arrows, size=BOARD_SIZE)

    def best_san(self, ply: int) -> str | None:
        """The engine's better move at ``ply`` in SAN, where known."""
        best = self.evals[ply - 1].best if ply - 1 < len(self.evals) else None
        if not best:
            return None
        board = chess.Board(self.initial_fen) if self.initial_fen else chess.Board()
        try:
            for san in self.sans[: ply - 1]:
                board.push_san(san)
            return board.san(chess.Move.from_uci(best))
        except (ValueError, AssertionError):
            return None


def _moves_and_clocks(game: AnalysedGame) -> tuple[tuple[str, ...], tuple[int, ...] | None]:
    """The game's moves (SAN) and Lichess's exported clocks (centiseconds, one per ply) where
    the stored text has them."""
    if game.source == "pgn":
        start, board, _problem = read_moves(game.raw, source="pgn", variant=game.variant,
                                            initial_fen=game.initial_fen)
        sans: list[str] = []
        for move in board.move_stack:
            sans.append(start.san(move))
            start.push(move)
        return tuple(sans), None
    try:
        obj = json.loads(game.raw)
    except ValueError:
        return (), None
    moves, clocks = obj.get("moves"), obj.get("clocks")
    return (tuple(moves.split()) if isinstance(moves, str) else (),
            tuple(clocks) if isinstance(clocks, list) and all(
                c.__class__ is int for c in clocks) else None)


def _uci_moves(sans: Sequence[str], initial_fen: str | None) -> list[str]:
    board = chess.Board(initial_fen) if initial_fen else chess.Board()
    out: list[str] = []
    for san in sans:
        try:
            move = board.push_san(san)
        except ValueError:
            break
        out.append(move.uci())
    return out


def engine_judgments(evals: Sequence[PlyEval], ucis: Sequence[str], *, white_first: bool = True
                     ) -> tuple[PlyEval, ...]:
    """A local analysis's evals with Lichess's judgments made by its rule in full: a move is
    judged (:func:`~tracker.analysis.formulas.judge`, against the eval before it, 15 cp
    before the first move) only where the engine's best move (``best``) is another than the
    move played (``ucis``, one per ply)."""
    out: list[PlyEval] = []
    before = START
    for i, after in enumerate(evals):
        played = ucis[i] if i < len(ucis) else None
        judgment = None
        if after.best and played and after.best != played and before.known and after.known:
            judgment = judge(before, after, white_moved=(i % 2 == 0) == white_first)
        out.append(after._replace(judgment=judgment))
        if after.known:
            before = after
    return tuple(out)


def _score(result: str | None, color: Color) -> float | None:
    if result == DRAW:
        return 0.5
    if result in (WHITE_WINS, BLACK_WINS):
        return 1.0 if (result == WHITE_WINS) == (color == "white") else 0.0
    return None


def _winner(result: str | None) -> Color | None:
    return "white" if result == WHITE_WINS else "black" if result == BLACK_WINS else None


def _engine_label(a: Analysis) -> str | None:
    if a.source != "engine":
        return None
    name = " ".join(x for x in (a.engine, a.engine_version) if x) or "engine"
    label = f"{name}, {a.nodes:,} nodes" if a.nodes else name
    calibration = calibration_id(a)
    return label + (f", calibrated ({calibration})" if calibration else UNCALIBRATED)


def first_turn(initial_fen: str | None) -> tuple[bool, int]:
    """``(white moves first, the first move's number)`` of a game that starts from
    ``initial_fen`` (``None`` or empty: the standard start, ``(True, 1)``), as python-chess
    reads the FEN's side to move and full-move number; a FEN it cannot read counts as the
    standard start."""
    if not initial_fen:
        return True, 1
    try:
        board = chess.Board(initial_fen)
    except ValueError:
        return True, 1
    return board.turn == chess.WHITE, board.fullmove_number


def game_strength(game: AnalysedGame, model: LevelModel | None) -> GameStrength:
    """One stored analysed game → :class:`GameStrength` (``model``: the level model of its
    perf, ``None`` where none serves it: then no level). Its coverage is the plies with an
    eval over the plies that need one; below :data:`FULL_COVERAGE` no accuracy, ACPL or level
    is given (the judgments and turning point are those of the plies covered)."""
    return with_levels(model, [unlevelled(game, model)])[0]


def with_levels(model: LevelModel | None, games: Sequence[GameStrength]) -> list[GameStrength]:
    """``games`` (:func:`unlevelled`) with each side's level and its FIDE-scale readings, the
    levels of all computed at once (:func:`~tracker.analysis.level.levels_of_scores`)."""
    scored = [(g, s) for g in games for s in (g.white, g.black) if s.score is not None]
    if model is None or not scored:
        return list(games)
    levels = {id(s): level for (_, s), level in zip(scored, levels_of_scores(model, [
        ([s.score], s.moves, g.source == "engine") for g, s in scored if s.score is not None
    ]), strict=True)}
    memos: dict[str, dict[tuple[str, int], int | None]] = {}  # FIDE readings by perf

    def levelled(s: SideStrength, perf: str) -> SideStrength:
        level = levels.get(id(s))
        if level is None:
            return s
        return SideStrength(s.color, s.user_id, s.name, s.rating, s.accuracy, s.acpl,
                            s.inaccuracy, s.mistake, s.blunder, level,
                            fide_levels(level, perf, memos.setdefault(perf, {})),
                            s.turning_point, s._plies,
                            s.counts_computed, s.moves, s.score, s.set_score)

    out: list[GameStrength] = []
    for g in games:
        out.append(GameStrength(
            g.id, g.perf, g.played_at, g.source, g.engine, levelled(g.white, g.perf or ""),
            levelled(g.black, g.perf or ""), g.turn, g.initial_fen, g.evaluated, g.plies,
            g._plies))
    return out


def unlevelled(game: AnalysedGame, model: LevelModel | None) -> GameStrength:
    """:func:`game_strength` but for the levels (``level`` ``None``, no FIDE readings): each
    side's ``score`` is there for :func:`with_levels`."""
    sans, clocks = _moves_and_clocks(game)
    white_first, first_move = first_turn(game.initial_fen)
    evals = calibrated_evals(game.analysis)  # a local analysis on Lichess's scale
    evals = evals[: len(sans)] if sans else evals
    if game.analysis.source == "engine":
        evals = engine_judgments(evals, _uci_moves(sans, game.initial_fen),
                                 white_first=white_first)
    summary = game_summary(evals, white_first=white_first)
    turns = turning_points(evals, sans, winner=_winner(game.result),
                           white_first=white_first, first_move_number=first_move)
    clock = ((game.clock_initial, game.clock_increment or 0)
             if game.clock_initial is not None else None)
    evaluated = sum(1 for e in evals if e.known)
    plies = max(len(sans) - (game.status == "mate"), 0) if sans else len(evals)
    covered = plies == 0 or Fraction(evaluated, plies) >= FULL_COVERAGE
    game_turn = turns.game
    if not covered:  # "balanced to the end" read from 3 plies of 125 would be a guess
        game_turn = GameTurn(None, f"not read: evals for {evaluated} of {plies} plies only")
    sides: dict[Color, SideStrength] = {}
    sided: tuple[tuple[Color, Any, Any, TurningPoint | None], ...] = (
        ("white", game.white, summary.white, turns.white),
        ("black", game.black, summary.black, turns.black))
    local = game.analysis.source == "engine"
    scaled = evals if local else on_training_scale(evals, game.created_at_ms)
    plies_of = _Plies(None, model, tuple(evals), win_curve(evals, white_first=white_first),
                      sans)
    flags = board_flags(sans, game.initial_fen) if sans else None
    for color, who, player, point in sided:
        features = level_features(scaled, color, white_first=white_first, clock=clock,
                                  clocks=clocks, result=_score(game.result, color),
                                  status=game.status, local=local, sans=sans or None,
                                  initial_fen=game.initial_fen, flags=flags)
        plies_of.features[color] = features
        # A partial analysis shows no accuracy, ACPL or level: 2 moves are not a game's.
        scored, set_scored = (scores(model, features)
                              if covered and model is not None and features.moves
                              else (None, None))
        sides[color] = SideStrength(
            color, who[0], who[1], who[2], player.accuracy if covered else None,
            player.acpl if covered else None, player.inaccuracy,
            player.mistake, player.blunder, None, (), point, plies_of,
            player.computed, len(features.moves), scored, set_scored)
    return GameStrength(
        game.id, game.perf, utc_from_ms(game.created_at_ms), game.analysis.source,
        _engine_label(game.analysis), sides["white"], sides["black"], game_turn,
        game.initial_fen, evaluated, plies, plies_of)


def model_for(perf: str | None) -> LevelModel | None:
    """The level model serving ``perf``, or ``None`` where none does (a variant)."""
    if not perf:
        return None
    try:
        return load_level_model(perf)
    except ValueError:
        return None


@dataclass(frozen=True, slots=True)
class SetLevel:
    """The level a set of games shows together: ``label`` (a month ``YYYY-MM``, or
    ``"last 20"``), ``games`` in the set with a level, and the ``level`` (``None`` without
    one); ``cut``: the end of the model's grid its range is cut at
    (:func:`~tracker.analysis.level.grid_end`: narrower than the moves say), else ``None``."""

    label: str
    games: int
    level: Level | None
    fide: tuple[FideLevel, ...] = ()
    cut: int | None = None


@dataclass(frozen=True, slots=True)
class PlayerStrength:
    """A player's analysed games of one perf: ``games`` newest first as (game, the player's
    colour); ``months`` oldest first; ``recent`` the last :data:`RECENT_GAMES` games'
    level; ``model``: the level model's key (``None`` where none serves the perf) and
    ``note`` what all its levels need said (what a speed's model borrows from the rapid fit),
    said once; ``shared``: the head of every level's own ``note`` that ``note`` says
    (:func:`~tracker.analysis.level.model_note`; :meth:`own_note` gives the rest);
    ``set_games``: the games from which a set is read by the model's set fit (fewer: the mean
    of the games' scores), ``None`` without one; ``scale``: the perf on whose Lichess scale
    the levels are (the model's fitted perf: ``"classical"`` for correspondence, which borrows
    the classical model), ``None`` without a model.
    Games whose evals cover only part of them (:attr:`GameStrength.covered` false: ``partial``
    of them) are listed in ``games`` but count in neither ``months`` nor ``recent``."""

    player: str
    perf: str
    games: list[tuple[GameStrength, Color]]
    months: list[SetLevel]
    recent: SetLevel
    model: str | None
    note: str | None
    partial: int = 0
    shared: str | None = None
    set_games: int | None = None
    scale: str | None = None

    def own_note(self, level: Level | None) -> str | None:
        """What ``level``'s note says beyond what every level of the report says (:attr:`note`,
        said once): the model weak there or outside its fitted range, local evals, too few
        moves; ``None`` when nothing more."""
        if level is None or not level.note:
            return None
        note = level.note
        if self.shared and note.startswith(self.shared):
            note = note[len(self.shared):].lstrip("; ")
        return note or None

    def recent_games(self) -> list[tuple[GameStrength, Color]]:
        """The games :attr:`recent` reads: the newest :data:`RECENT_GAMES` covered ones."""
        return [(g, c) for g, c in self.games if g.covered][:RECENT_GAMES]

    def recent_uncalibrated(self) -> str | None:
        """Said of the recent level where some of the games it reads (:meth:`recent_games`)
        carry local evals no engine calibration covers (:attr:`GameStrength.uncalibrated`):
        ``"3 of these 12 games analysed at a budget no engine calibration covers: they read
        higher than Lichess's evals would"``; else ``None``."""
        read = self.recent_games()
        raw = sum(1 for g, _ in read if g.uncalibrated)
        if not raw:
            return None
        return (f"{raw} of these {len(read)} games analysed at a budget no engine calibration "
                "covers: they read higher than Lichess's evals would"
                if len(read) > 1 else "analysed at a budget no engine calibration covers: it "
                "reads higher than Lichess's evals would")

    def recent_apart(self) -> int | None:
        """The mean of the single levels (their estimates, rounded) of the games
        :attr:`recent` reads (:meth:`recent_games`: partial games left out), where the
        games read together differ from it by more than :data:`APART` points, else ``None``:
        a set has a fit of its own, and each single game's estimate leans toward the typical
        player, so the reader is told why the two differ."""
        singles = [lv.estimate for g, c in self.recent_games()
                   if (lv := g.side(c).level) is not None]
        level = self.recent.level
        if level is None or len(singles) < 2:
            return None
        mean = sum(singles) / len(singles)
        return round(mean) if abs(level.estimate - mean) > APART else None

    def to_json(self) -> dict[str, Any]:
        """The ``tracker strength USER --perf P --json`` object (docs/analysis.md)."""
        return {
            "games": [side_json(g, color) for g, color in self.games],
            "months": [{"month": m.label, "games": m.games, "level": level_json(m.level)}
                       for m in self.months],
            "recent": {"games": self.recent.games, "level": level_json(self.recent.level)},
        }


def _set_level(model: LevelModel | None, label: str, games: list[tuple[GameStrength, Color]],
               perf: str) -> SetLevel:
    usable = [(g, g.side(color)) for g, color in games if g.side(color).moves]
    scores = [s.score for _, s in usable if s.score is not None]
    if model is None or not scores:
        return SetLevel(label, len(usable), None)
    level = level_of_scores(model, scores, sum(s.moves for _, s in usable),
                            any(g.source == "engine" for g, _ in usable),
                            [s.set_score for _, s in usable if s.score is not None])
    return SetLevel(label, len(usable), level, fide_levels(level, perf),
                    grid_end(model, level.low, level.high))


#: Each level model's digest, by ``id`` (the model kept, so that its ``id`` is not reused).
_MODEL_DIGESTS: dict[int, tuple[LevelModel, bytes]] = {}


def _model_digest(model: LevelModel) -> bytes:
    known = _MODEL_DIGESTS.get(id(model))
    if known is None or known[0] is not model:
        known = (model, hashlib.blake2b(json.dumps(
            [model.name, model.perf, model.fitted_perf, model.data], sort_keys=True,
            default=str).encode(), digest_size=16).digest())
        _MODEL_DIGESTS[id(model)] = known
    return known[1]


def _options(model: LevelModel | None) -> str:
    """32 hex digits that change with anything a game's saved result depends on besides the
    game: the level model (its key, version and fitted data), the engine calibrations, the
    factor of Lichess's normalised era and the scale models that read its levels on FIDE's
    scale (their fits)."""
    h = hashlib.blake2b(digest_size=16)
    if model is not None:
        h.update(_model_digest(model))
        h.update(repr(models_for(model.perf)).encode())
    h.update(repr(sorted(engine_calibration.calibrations().items())).encode())
    h.update(repr(engine_calibration.lichess_era()).encode())
    return h.hexdigest()


def _point_row(point: TurningPoint | None) -> list[Any] | None:
    return None if point is None else list(point)


def _saved_row(game: GameStrength, fingerprint: bytes) -> list[Any]:
    """What is saved of one game's report: all but what the read gives (the sides' names and
    ratings, the evals, the moves)."""
    return [fingerprint, game.evaluated, game.plies, game.turn.label,
            _point_row(game.turn.point)] + [
        [s.accuracy, s.acpl, s.inaccuracy, s.mistake, s.blunder, s.counts_computed,
         None if s.level is None else list(s.level), _point_row(s.turning_point), s.moves,
         s.score, [list(f) for f in s.fide], s.set_score] for s in (game.white, game.black)]


def _saved_game(stored: AnalysedGame, row: list[Any], model: LevelModel | None
                ) -> GameStrength:
    """:func:`game_strength` of ``stored`` from its saved ``row`` (:func:`_saved_row`); the
    evals, Win% curve, moves and features are computed on first use. Raises ValueError or
    TypeError for a malformed row."""
    _, evaluated, plies, label, point, *rows = row
    plies_of = _Plies(stored, model)
    sides: list[SideStrength] = []
    sided: tuple[tuple[Color, Any, Any], ...] = (("white", stored.white, rows[0]),
                                                 ("black", stored.black, rows[1]))
    for color, who, side in sided:
        accuracy, acpl, inaccuracy, mistake, blunder, computed, level_row, turning, moves, \
            scored, readings, set_scored = side
        sides.append(SideStrength(
            color, who[0], who[1], who[2], accuracy, acpl, inaccuracy, mistake, blunder,
            None if level_row is None else Level(*level_row),
            tuple(FideLevel(*f) for f in readings),
            None if turning is None else TurningPoint(*turning), plies_of, computed, moves,
            scored, set_scored))
    return GameStrength(
        stored.id, stored.perf, utc_from_ms(stored.created_at_ms), stored.provenance.source,
        _engine_label(stored.provenance), sides[0], sides[1],
        GameTurn(None if point is None else TurningPoint(*point), label), stored.initial_fen,
        evaluated, plies, plies_of)


def _read_saved(db: Database, user_id: str, perf: str, key: Key) -> dict[str, list[Any]]:
    """The saved per-game rows by game id (empty: none saved, or unreadable)."""
    payload = saved_any(db, user_id, perf, key)
    if payload is None:
        return {}
    try:
        rows = msgspec.msgpack.decode(zstandard.ZstdDecompressor().decompress(payload))
    except (msgspec.DecodeError, zstandard.ZstdError):
        return {}
    return rows if isinstance(rows, dict) else {}


def player_strength(db: Database, user_id: str, perf: str) -> PlayerStrength:
    """The strength report of ``user_id``'s analysed games of ``perf``. Raises
    NoAnalysisError when the player has none.

    Each game's result (its accuracy, ACPL, counts, level, turning point…) is saved (kind
    :data:`~tracker.store.snapshots.STRENGTH`, one entry per player and perf) beside the
    game's fingerprint and read back while the fingerprint, the level model and the engine
    calibrations are those it was computed with: a game re-analysed or imported again with
    other evals is computed afresh; the sets' levels are combined from the saved scores."""
    uid = user_id.lower()
    model = model_for(perf)
    key = Key(STRENGTH, _options(model), SAVED_VERSION)
    saved = _read_saved(db, uid, perf, key)
    rows: dict[str, list[Any]] = {}
    games: list[tuple[GameStrength, Color]] = []
    fresh: list[tuple[int, bytes]] = []  # (index in games, fingerprint) of those computed
    for stored in analysed_games(db, uid, perf):
        color: Color = "white" if stored.white[0] == uid else "black"
        row: Any = saved.get(stored.id)
        game = None
        if isinstance(row, list) and row and row[0] == stored.fingerprint:
            try:
                game = _saved_game(stored, row, model)
            except (ValueError, TypeError):
                game = None  # a malformed row: computed afresh
        if game is None:
            game = unlevelled(stored, model)
            fresh.append((len(games), stored.fingerprint))
        else:
            rows[stored.id] = row
        games.append((game, color))
    if not games:
        raise NoAnalysisError(f"no analysed {perf} games of {user_id}: run tracker analyse "
                              f"{user_id} --perf {perf}, or import with Lichess's evals")
    levelled = with_levels(model, [games[i][0] for i, _ in fresh])
    for (i, fingerprint), game in zip(fresh, levelled, strict=True):
        games[i] = (game, games[i][1])
        rows[game.id] = _saved_row(game, fingerprint)
    if rows != saved:
        save_only(db, uid, perf, key, zstandard.ZstdCompressor(level=3).compress(
            msgspec.msgpack.encode(rows)))
    covered = [(g, color) for g, color in games if g.covered]
    by_month: dict[str, list[tuple[GameStrength, Color]]] = {}
    for g, color in reversed(covered):
        by_month.setdefault(g.played_at.strftime("%Y-%m"), []).append((g, color))
    months = [_set_level(model, month, members, perf) for month, members in by_month.items()]
    recent = _set_level(model, f"last {RECENT_GAMES}", covered[:RECENT_GAMES], perf)
    note = None
    if model is not None and model.perf != model.fitted_perf:
        note = "; ".join(filter(None, (f"the {model.fitted_perf} model applied to {model.perf}: "
                                       f"no {model.perf} model yet", model.borrows)))
    elif model is not None:
        note = model.borrows
    return PlayerStrength(uid, perf, games, months, recent,
                          model.name if model is not None else None, note,
                          len(games) - len(covered),
                          model_note(model) if model is not None else None,
                          set_fit_games(model) if model is not None else None,
                          model.fitted_perf if model is not None else None)


def one_game(db: Database, game_id: str) -> GameStrength:
    """The strength report of one analysed game. Raises NoAnalysisError: no such game; a
    game whose moves cannot be read (``its moves cannot be read (move 14.Qh6 is illegal
    there): no analysis``, read again from its stored text); one not analysed yet."""
    stored = analysed_game(db, game_id)
    if stored is not None:
        return game_strength(stored, model_for(stored.perf))
    try:
        source = game_source(db, game_id)
    except RawTextError:  # there, its text damaged (a re-import repairs it): not read here
        source = ("", None, "", "")
    if source is None:
        raise NoAnalysisError(f"no game {game_id!r} in the database: give a Lichess game id "
                              "(8 characters, the end of its lichess.org address) of a game "
                              "imported here")
    raw, initial_fen, variant, kind = source
    problem = (unreadable_moves(raw, kind, initial_fen)
               if raw and variant in ANALYSABLE_VARIANTS else "")
    if problem:
        raise NoAnalysisError(f"no evals for the game {game_id!r}: its moves cannot be read "
                              f"({problem}): no analysis")
    raise NoAnalysisError(f"no evals stored for the game {game_id!r}: import it with "
                          "Lichess's analysis, or run tracker analyse for its player")


def level_json(level: Level | None) -> dict[str, Any] | None:
    """``{"estimate", "low", "high", "model", "note"}`` (Lichess rating points; ``note`` what
    the reader must know of this level, the text the CLI and the dashboard show, or ``None``),
    or ``None``."""
    if level is None:
        return None
    return {"estimate": level.estimate, "low": level.low, "high": level.high,
            "model": level.model, "note": level.note}


def turning_json(point: TurningPoint | None) -> dict[str, Any] | None:
    """``{"ply", "san", "win_before", "win_after", "best"}`` (Win% of the mover, one
    decimal; ``best`` UCI or ``None``), or ``None``."""
    if point is None:
        return None
    return {"ply": point.ply, "san": point.san, "win_before": round(point.win_before, 1),
            "win_after": round(point.win_after, 1), "best": point.best}


def side_json(game: GameStrength, color: Color) -> dict[str, Any]:
    """One side of one game with exactly :data:`GAME_KEYS`."""
    s = game.side(color)
    return {"id": game.id, "played_at": game.played_at, "color": color, "rating": s.rating,
            "accuracy": s.accuracy, "acpl": s.acpl, "inaccuracy": s.inaccuracy,
            "mistake": s.mistake, "blunder": s.blunder, "counts_computed": s.counts_computed,
            "level": level_json(s.level),
            "turning_point": turning_json(s.turning_point),
            "coverage": {"evals": game.evaluated, "plies": game.plies, "full": game.covered}}


def game_json(game: GameStrength) -> dict[str, Any]:
    """The ``tracker strength --game ID --json`` object: ``{"games": [white, black]}``, each
    side in :data:`GAME_KEYS`."""
    return {"games": [side_json(game, "white"), side_json(game, "black")]}


def with_judgments(evals: Iterable[PlyEval]) -> list[tuple[int, str]]:
    """``(ply, judgment)`` of the judged plies (1-based), for the eval graph's marks."""
    return [(i, e.judgment) for i, e in enumerate(evals, start=1) if e.judgment]

