"""Local evals on Lichess's scale: python scripts/calibrate_engine.py {collect,fit,compare} …

``collect``: analyses games that carry Lichess's own evals with the local engine at several node
budgets (tracker's own :class:`~tracker.sources.engine.LocalEngine`, one process, one thread,
the hash kept between the plies of a game), appending each finished (game, budget) to a cache of
plain JSON lines; an interrupted run resumes. The games, in a fixed shuffled order (seed
:data:`SEED`): the bundled player's 9 blitz games Lichess analysed first, then two games of the
989-game every-speed PGN for each game of the 41k rapid set (players the level model keeps
apart). Budget by budget in the order of :data:`FIRST` over every game, then one game in
:data:`EVERY_50K` at 50,000 nodes and one in :data:`EVERY_100K` at 100,000: a run cut short
has the first budgets on the most games.

``fit``: reads the cache (``--cache``, plain or gzip; default the copy shipped in
``scripts/data/``, made by ``gzip -9`` of the collected one), the shared data for Lichess's
evals, and fits per budget the calibration of :mod:`tracker.analysis.engine_calibration` on the
games whose id hashes into the fitting part (two in three), then reports on the others (games
the calibration never saw): the mean signed difference local − Lichess of ACPL, accuracy and
level, before and after the calibration, with a bootstrap interval; the cost per game; the
budget curve and the default budget; the bundled player's games Lichess analysed, his level
from Lichess's evals against the calibrated local ones. Each game's level is read by the
newest level model of its speed in the repository (``tracker/analysis/models/
level-<speed>-<N>.json``, the largest N), Lichess's evals put on the model's training scale as
the product does (:func:`tracker.analysis.level.on_training_scale`). Writes the calibration
file: ``tracker/analysis/models/engine-calibration-<N>.json``, the newest version rewritten
where the calibrations' numbers are unchanged, else the next version (new ids: analyses stored
under the older ones are still read through them). No engine is run: about a minute. After a
refit of the level models, ``python scripts/calibrate_engine.py fit`` redoes this.

``compare``: another cache's games (e.g. ``collect --fresh-hash``: the hash cleared before
every search) against the same games at the same budget.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import json
import random
import re
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final, NamedTuple

import chess
import chess.pgn
import numpy as np
import zstandard

from tracker.analysis.engine_calibration import (
    CALIBRATION_FILE,
    EvalCalibration,
    LichessEra,
    calibration_files,
)
from tracker.analysis.formulas import acpl, game_accuracy
from tracker.analysis.level import (
    MODELS_DIR,
    GameFeatures,
    LevelModel,
    game_level,
    level_features,
    level_model_from_json,
    load_level_model,
    set_level,
)
from tracker.core.evals import Color, PlyEval, from_lichess_entry
from tracker.sources.engine import LocalEngine
from tracker.sources.pgn_evals import pgn_analysis

ROOT: Final = Path(__file__).resolve().parent.parent
SHARED: Final = ROOT.parent / "shared" / "data"
RAPID: Final = Path("analysed/lichess-rapid-analysed-41k.ndjson.zst")
PGN: Final = Path("analysed/lichess-2020-01-analysed-989.pgn")
BUNDLED: Final = Path("lichess/indexinator-2025-10-later.ndjson")
#: Where ``collect`` appends (plain JSON lines, not in git) …
DEFAULT_CACHE: Final = ROOT / "benchmarks" / ".data" / "engine-evals.jsonl"
#: … and the copy in the repository ``fit`` reads by default (``gzip -9`` of it): the local
#: evals of the shipped calibration, so that a refit needs no engine.
SHIPPED_CACHE: Final = ROOT / "scripts" / "data" / "engine-evals-stockfish-15.1.jsonl.gz"
SEED: Final = 20261206
BASE: Final = (5_000, 10_000, 20_000)
#: The order the base budgets are run in (the likely default first, on a busy machine).
FIRST: Final = (10_000, 20_000, 5_000)
EVERY_50K: Final = 5
EVERY_100K: Final = 15
#: Speeds of the PGN analysed (correspondence and ultrabullet left out: 5 games).
SPEEDS: Final = ("bullet", "blitz", "rapid", "classical")


LEVEL_FILE: Final = re.compile(r"level-(?P<speed>[A-Za-z]+)-(?P<version>\d+)\.json")


def newest_level_models(folder: Path = MODELS_DIR) -> dict[str, LevelModel]:
    """Per speed of :data:`SPEEDS`, the newest level model of the repository: the file
    ``level-<speed>-<N>.json`` of ``folder`` with the largest N (the product's own choice where
    a speed has none there)."""
    newest: dict[str, tuple[int, Path]] = {}
    for path in folder.glob("level-*.json"):
        found = LEVEL_FILE.fullmatch(path.name)
        if found and found["speed"] in SPEEDS:
            version = int(found["version"])
            if version > newest.get(found["speed"], (-1, path))[0]:
                newest[found["speed"]] = (version, path)
    return {speed: (level_model_from_json(json.loads(newest[speed][1].read_text(
                encoding="utf-8")), speed) if speed in newest else load_level_model(speed))
            for speed in SPEEDS}


def split_of_player(player: str) -> str:
    """The level model's fixed split by player (scripts/fit_level_model.py)."""
    bucket = hashlib.sha256(f"level-split:{player}".encode()).digest()[0] % 10
    return "train" if bucket < 6 else "validation" if bucket < 8 else "held-out"


def ndjson_lines(path: Path) -> Iterator[bytes]:
    """The lines of an NDJSON file, zstd-compressed or plain."""
    with path.open("rb") as raw:
        stream: Any = (io.BufferedReader(zstandard.ZstdDecompressor().stream_reader(raw))
                       if path.suffix == ".zst" else raw)
        yield from (line for line in stream if line.strip())


def pgn_games(path: Path) -> Iterator[tuple[str, str, list[str], str, int | None,
                                             tuple[int, int] | None]]:
    """(id, speed, SANs, movetext, start in ms since the epoch, clock setting (initial s,
    increment s) or ``None``) of every game in the PGN file of the shared set."""
    text = path.read_text(encoding="utf-8")
    for chunk in text.split("\n\n[Event ")[0:]:
        chunk = chunk if chunk.startswith("[Event ") else "[Event " + chunk
        game = chess.pgn.read_game(io.StringIO(chunk))
        if game is None:
            continue
        gid = game.headers.get("Site", "").rsplit("/", 1)[-1]
        words = game.headers.get("Event", "").split()
        speed = words[1].lower() if len(words) > 1 else ""
        board = game.board()
        sans = []
        for move in game.mainline_moves():
            sans.append(board.san(move))
            board.push(move)
        movetext = chunk.split("\n\n", 1)[1] if "\n\n" in chunk else ""
        when = f"{game.headers.get('UTCDate', '')} {game.headers.get('UTCTime', '')}"
        try:
            started = int(datetime.strptime(when, "%Y.%m.%d %H:%M:%S").replace(
                tzinfo=UTC).timestamp() * 1000)
        except ValueError:
            started = None
        control = game.headers.get("TimeControl", "-")
        clock = (int(control.split("+")[0]), int(control.split("+")[1])) if re.fullmatch(
            r"\d+\+\d+", control) else None
        yield gid, speed, sans, movetext, started, clock


def sample(shared: Path) -> list[dict[str, Any]]:
    """The games to analyse, in order: {id, source, speed, moves (SAN list)}."""
    rng = random.Random(SEED)
    bundled = [json.loads(line) for line in ndjson_lines(shared / BUNDLED)]
    first = [{"id": g["id"], "source": "bundled", "speed": g["speed"],
              "moves": g["moves"].split()} for g in bundled if g.get("analysis")]
    pgn = [{"id": gid, "source": "pgn", "speed": speed, "moves": sans}
           for gid, speed, sans, _, _, _ in pgn_games(shared / PGN) if speed in SPEEDS and sans]
    rng.shuffle(pgn)
    rapid: list[dict[str, Any]] = []
    for line in ndjson_lines(shared / RAPID):
        g = json.loads(line)
        users = [g["players"][c].get("user", {}).get("id") for c in ("white", "black")]
        if all(u is not None and split_of_player(u) == "held-out" for u in users):
            rapid.append({"id": g["id"], "source": "rapid", "speed": "rapid",
                          "moves": g["moves"].split()})
    rapid.sort(key=lambda g: g["id"])
    rng.shuffle(rapid)
    out = list(first)
    while pgn or rapid:
        out += [pgn.pop() for _ in range(2) if pgn]
        if rapid:
            out.append(rapid.pop())
        if len(out) >= 1200:
            break
    return out


def budgets(index: int) -> list[int]:
    """The budgets the ``index``-th game of the sample is analysed at."""
    out = list(BASE)
    if index % EVERY_50K == 0:
        out.append(50_000)
    if index % EVERY_100K == 0:
        out.append(100_000)
    return out


def encode(cp: int | None, mate: int | None) -> int | str | None:
    """One eval in the cache: centipawns as an int, a mate as ``"#-3"``, none as null."""
    return cp if cp is not None else f"#{mate}" if mate is not None else None


def read_cache(path: Path) -> Iterator[dict[str, Any]]:
    """The cache's records (plain or gzip JSON lines)."""
    if not path.exists():
        return
    opener: Any = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        for line in f:
            if line.strip():
                yield json.loads(line)


class FreshHashEngine(LocalEngine):
    """A :class:`LocalEngine` whose hash is cleared before every search (a new game key each
    time: python-chess sends ``ucinewgame``): the yardstick of keeping it between plies."""

    def _search(self, board: chess.Board, game_id: str, spent: Any) -> Any:
        return super()._search(board, f"{game_id}/{spent.positions}", spent)


def collect(shared: Path, cache: Path, games: int, engine_path: str | None,
            only: int | None = None, fresh_hash: bool = False) -> None:
    """Analyse the sample's first ``games`` games at their budgets, appending to ``cache``."""
    done = {(r["id"], r["nodes"]) for r in read_cache(cache)}
    cache.parent.mkdir(parents=True, exist_ok=True)
    todo = sample(shared)[:games]
    engines: dict[int, LocalEngine] = {}
    # budget by budget in the order of FIRST (on every game, then the next budget), then the
    # larger ones on their share: a run cut short has the first budgets on the most games
    order = [(i, g, nodes) for nodes in FIRST for i, g in enumerate(todo)]
    order += [(i, g, nodes) for i, g in enumerate(todo) for nodes in budgets(i)
              if nodes not in FIRST]
    if only is not None:  # one budget on the first games (the hash's yardstick)
        order = [(i, g, only) for i, g in enumerate(todo)]
    try:
        for i, g, nodes in order:
            if (g["id"], nodes) in done:
                continue
            engine = engines.get(nodes)
            if engine is None:
                engine = engines[nodes] = (FreshHashEngine if fresh_hash else LocalEngine)(
                    nodes, engine_path)
            started = time.perf_counter()
            cpu = time.process_time()
            result = engine.analyse_game(f"{g['id']}@{nodes}", g["moves"])
            record = {"id": g["id"], "source": g["source"], "speed": g["speed"],
                      "engine": f"{engine.name} {engine.version}".strip(), "nodes": nodes,
                      "wall": round(time.perf_counter() - started, 3),
                      "python_cpu": round(time.process_time() - cpu, 3),
                      "engine_seconds": round(result.spent.seconds, 3),
                      "nodes_searched": result.spent.nodes,
                      "positions": result.spent.positions,
                      "followed": result.spent.followed,
                      "evals": [encode(e.cp, e.mate) for e in result.analysis.evals]}
            with cache.open("a", encoding="utf-8") as out:
                out.write(json.dumps(record, separators=(",", ":")) + "\n")
            print(f"{i + 1}/{len(todo)} {g['id']} {g['speed']} {nodes}: "
                  f"{len(g['moves'])} plies, {record['wall']} s", flush=True)
    finally:
        for engine in engines.values():
            engine.close()


# --- the fit -----------------------------------------------------------------------------------

#: The targets on games the calibration never saw (mean signed difference local − Lichess).
TOLERANCE: Final = {"acpl": 5.0, "accuracy": 2.0, "level": 30.0}
#: The sources whose Lichess evals the calibration maps onto: Lichess's analyses of 2014–2022,
#: the era the level models were fitted on. Lichess's evals are of their time: the rapid set's
#: (88 % from 2022) run ~1.3× larger than the 2020 PGN's for the same positions, so each
#: source's figures are reported apart too (docs/performance.md).
FIT_SOURCES: Final = ("rapid", "pgn")
#: Lichess's normalised era (Stockfish 15.1 on): games played from 2023-01-01 (ms since the
#: epoch, UTC). Its evals are put on the models' scale by a factor measured through the local
#: engine (:func:`fit_era`), on the games of :data:`ERA_SOURCE` (the only ones of the era).
ERA_FROM_MS: Final = 1_672_531_200_000
ERA_SOURCE: Final = "bundled"
#: The factor assumed before it was measured (Stockfish 16.1's pawn value 345 over the old 208),
#: reported beside the measured one.
ERA_ASSUMED: Final = 1.66
#: The factor is searched in this range, by bisection to this precision.
ERA_RANGE: Final = (1.0, 2.5)
ERA_PRECISION: Final = 0.001
#: The share of games kept apart (by a hash of the game's id) to check the calibration on.
HELD_OUT_SHARE: Final = 3  # one game in 3
#: The pattern search's start (scale, power), first step and last step.
START: Final = (1.1, 1.1)
STEP: Final = 0.1
LAST_STEP: Final = 0.01
BOOTSTRAP: Final = 1000
#: A budget is within noise of the next larger one when the next reads the per-game level
#: closer to Lichess's evals by less than this (rating points, the 90 % interval's upper
#: bound): a third of the 30-point tolerance, under 5 % of the level's per-game error against
#: real ratings (~235).
NOISE: Final = 10.0
#: Fewest games analysed at a budget for it to be offered (as a default or in the docs).
MIN_GAMES: Final = 300
#: Fewest held-out games (of the fitting sources) for a budget to be offered: about the held-out
#: share of MIN_GAMES, less the Lichess-era games that the calibration is not fitted on.
MIN_HELD_OUT: Final = 90
COLORS: Final[tuple[Color, Color]] = ("white", "black")


def held_out(game_id: str) -> bool:
    """Whether the game is kept apart from the fit (fixed: a hash of its id)."""
    return hashlib.sha256(f"engine-calibration:{game_id}".encode()).digest()[0] % \
        HELD_OUT_SHARE == 0


def decode(value: int | str | None) -> PlyEval:
    """One cached eval back (:func:`encode`)."""
    if value is None:
        return PlyEval(None, None)
    if isinstance(value, str):
        return PlyEval(None, int(value[1:]))
    return PlyEval(value, None)


_FIRST_ID: Final = re.compile(rb'"id"\s*:\s*"([^"]+)"')


class LichessGame(NamedTuple):
    """Lichess's own evals of a game, its start (ms since the epoch, ``None`` unknown), its
    players' ids (White's, Black's), its moves (SAN) and clock setting (initial s, increment s;
    ``None`` unknown): what the level model reads beside the evals."""

    evals: list[PlyEval]
    played_at_ms: int | None
    players: tuple[str | None, str | None] = (None, None)
    sans: tuple[str, ...] = ()
    clock: tuple[int, int] | None = None


def _clock(g: dict[str, Any]) -> tuple[int, int] | None:
    clock = g.get("clock")
    return (int(clock["initial"]), int(clock["increment"])) if clock else None


def _player_ids(g: dict[str, Any]) -> tuple[str | None, str | None]:
    ids = [g["players"][c].get("user", {}).get("id") for c in COLORS]
    return ids[0], ids[1]


def lichess_evals(shared: Path, ids: set[str]) -> dict[str, LichessGame]:
    """Lichess's own evals of the games ``ids`` (with each game's start), from the shared data."""
    out: dict[str, LichessGame] = {}
    for line in ndjson_lines(shared / BUNDLED):
        g = json.loads(line)
        if g["id"] in ids and g.get("analysis"):
            out[g["id"]] = LichessGame([from_lichess_entry(e) for e in g["analysis"]],
                                       g.get("createdAt"), _player_ids(g),
                                       tuple(g["moves"].split()), _clock(g))
    for gid, _, sans, movetext, started, clock in pgn_games(shared / PGN):
        found = pgn_analysis(movetext) if gid in ids else None
        if found is not None:
            out[gid] = LichessGame(list(found.evals), started, sans=tuple(sans), clock=clock)
    for line in ndjson_lines(shared / RAPID):
        found = _FIRST_ID.search(line)  # the game's id comes first: no JSON read for the rest
        gid = found.group(1).decode() if found else ""
        if gid in ids:
            g = json.loads(line)
            out[gid] = LichessGame([from_lichess_entry(e) for e in g["analysis"]],
                                   g.get("createdAt"), _player_ids(g),
                                   tuple(g["moves"].split()), _clock(g))
    return out


Metrics = tuple[float | None, float | None, float | None]  # ACPL, accuracy, level of one side


class Game:
    """One game analysed at one budget: its local evals, Lichess's, what Lichess's give."""

    def __init__(self, record: dict[str, Any], lichess: LichessGame, model: LevelModel,
                 era: LichessEra | None = None) -> None:
        self.record = record
        self.id: str = record["id"]
        self.model = model
        self.lichess = lichess.evals
        self.played_at_ms = lichess.played_at_ms
        self.players = lichess.players
        self.sans = lichess.sans or None
        self.clock = lichess.clock
        self.local = [decode(v) for v in record["evals"]][: len(lichess.evals)]
        self.read_era(era)

    def read_era(self, era: LichessEra | None) -> None:
        """The level from Lichess's evals as the product reads it, on the model's training
        scale: those of ``era`` × its factor (``None``: as they are)."""
        self.lichess_for_level = (self.lichess if era is None
                                  else era.apply(self.lichess, self.played_at_ms))
        self.reference = self.metrics(self.lichess, self.lichess_for_level)

    def metrics(self, evals: list[PlyEval], for_level: list[PlyEval] | None = None
                ) -> tuple[Metrics, Metrics]:
        """(White's, Black's) ACPL and accuracy from ``evals``, level from ``for_level`` (by
        default ``evals``)."""
        acpls = acpl(evals)
        accs = game_accuracy(evals)
        out: list[Metrics] = []
        for i, color in enumerate(COLORS):
            features = level_features(evals if for_level is None else for_level, color,
                                      clock=self.clock, sans=self.sans)
            level = game_level(self.model, features).estimate if features.moves else None
            out.append((None if acpls[i] is None else float(acpls[i] or 0), accs[i],
                        None if level is None else float(level)))
        return out[0], out[1]

    def local_evals(self, calibration: EvalCalibration | None) -> list[PlyEval]:
        """The local evals, through ``calibration`` where one is given."""
        return self.local if calibration is None else list(calibration.apply(self.local))

    def differences(self, calibration: EvalCalibration | None) -> list[Metrics]:
        """Per side, local − Lichess of each figure (``None`` where either has none)."""
        mine = self.metrics(self.local_evals(calibration))
        return [tuple(None if a is None or b is None else a - b  # type: ignore[misc]
                      for a, b in zip(m, r, strict=True))
                for m, r in zip(mine, self.reference, strict=True)]


def mean_differences(games: list[Game], calibration: EvalCalibration | None
                     ) -> tuple[dict[str, float], dict[str, list[float]]]:
    """The mean signed difference of each figure over the games' sides, and the values."""
    values: dict[str, list[float]] = {k: [] for k in TOLERANCE}
    for g in games:
        for side in g.differences(calibration):
            for k, v in zip(TOLERANCE, side, strict=True):
                if v is not None:
                    values[k].append(v)
    return {k: float(np.mean(v)) if v else 0.0 for k, v in values.items()}, values


def loss(means: dict[str, float]) -> float:
    """How far the means are from 0, each in units of its tolerance."""
    return sum((means[k] / TOLERANCE[k]) ** 2 for k in TOLERANCE)


def calibration_of(engine: str, nodes: int, scale: float, power: float,
                   file_version: int = 1) -> EvalCalibration:
    """The calibration of ``engine`` (``"Stockfish 15.1"``) at ``nodes``, its id ending in the
    calibration file's version (``stockfish-15.1-10000n-2``)."""
    name, _, version = engine.rpartition(" ")
    key = f"{name.lower()}-{version}-{nodes}n-{file_version}"
    return EvalCalibration(key, name, version, nodes, scale, power)


def fit_budget(games: list[Game], engine: str, nodes: int,
               file_version: int = 1) -> EvalCalibration:
    """The (scale, power) whose mean differences on ``games`` are nearest 0 (:func:`loss`), by
    a pattern search: from :data:`START`, a step each way on each parameter while one helps,
    then half the step, down to :data:`LAST_STEP` (the loss is smooth in both, ~30 trials)."""
    def value(scale: float, power: float) -> float:
        return loss(mean_differences(games, calibration_of(engine, nodes, scale, power))[0])

    point, step = START, STEP
    here = value(*point)
    while step >= LAST_STEP:
        moved = False
        for ds, dp in ((step, 0.0), (-step, 0.0), (0.0, step), (0.0, -step)):
            trial = (round(point[0] + ds, 4), round(point[1] + dp, 4))
            if trial[0] <= 0 or trial[1] <= 0:
                continue
            there = value(*trial)
            if there < here:
                point, here, moved = trial, there, True
                break
        if not moved:
            step /= 2
    return calibration_of(engine, nodes, *point, file_version)


def interval(values: list[float], rng: np.random.Generator) -> list[float]:
    """The 5th and 95th percentiles of the mean, by a bootstrap over the values' games."""
    arr = np.asarray(values, dtype=np.float64)
    if len(arr) < 2:
        return [float("nan"), float("nan")]
    means = arr[rng.integers(0, len(arr), size=(BOOTSTRAP, len(arr)))].mean(axis=1)
    return [round(float(np.percentile(means, 5)), 1), round(float(np.percentile(means, 95)), 1)]


def figures(games: list[Game], calibration: EvalCalibration | None,
            rng: np.random.Generator) -> dict[str, Any]:
    """The mean signed differences (with a 90 % bootstrap interval), and the mean absolute
    difference of the level, over ``games``' sides."""
    means, values = mean_differences(games, calibration)
    out: dict[str, Any] = {"games": len(games), "player_games": len(values["level"])}
    for k in TOLERANCE:
        out[f"{k}_mean_signed"] = round(means[k], 2)
        out[f"{k}_interval_90"] = interval(values[k], rng)
    out["level_mean_absolute"] = round(float(np.mean(np.abs(values["level"]))), 1)
    out["within_tolerance"] = all(abs(means[k]) <= TOLERANCE[k] for k in TOLERANCE)
    return out


def file_version(path: Path) -> int:
    """The version in a calibration file's name (``engine-calibration-2.json``: 2)."""
    found = re.fullmatch(r"engine-calibration-(\d+)\.json", path.name)
    if found is None:
        raise ValueError(f"not a calibration file's name: {path.name}")
    return int(found.group(1))


def _numbers(data: dict[str, Any]) -> set[tuple[str, str, int, float, float]]:
    """What a calibration file applies: (engine, version, nodes, scale, power) of each entry,
    and ("lichess era", "", from, factor, 0) of its era."""
    era = data.get("lichess_era") or {}
    return {(e["engine"], e["engine_version"], e["nodes"], e["scale"], e["power"])
            for e in data["calibrations"]} | {
        ("lichess era", "", era.get("from_ms", 0), era.get("factor", 0.0), 0.0)}


def fit(shared: Path, cache: Path, out: Path | None,
        sources: tuple[str, ...] = FIT_SOURCES, folder: Path | None = CALIBRATION_FILE.parent,
        version: int | None = None) -> dict[str, Any]:
    """Fit every budget of the cache on the games of ``sources`` (the fitting part; checked on
    their held-out part, the other sources reported apart); the calibration file's data,
    written to ``out`` or, where ``out`` is ``None`` and ``folder`` is given, to ``folder``'s
    newest ``engine-calibration-<N>.json`` where what it applies is unchanged, else to N + 1
    (``version`` forces N); neither given: nothing written."""
    started = time.perf_counter()
    files = calibration_files(folder) if folder is not None else calibration_files()
    newest = files[-1] if files else None
    if version is None:
        version = file_version(out) if out is not None else (
            file_version(newest) + 1 if newest is not None else 1)
    records = list(read_cache(cache))
    lichess = lichess_evals(shared, {r["id"] for r in records})
    models = newest_level_models()
    by_budget: dict[tuple[str, int], list[Game]] = {}
    costs: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for r in records:
        if r["id"] not in lichess:
            continue
        by_budget.setdefault((r["engine"], r["nodes"]), []).append(
            Game(r, lichess[r["id"]], models[r["speed"]]))
        costs.setdefault((r["engine"], r["nodes"]), []).append(r)
    rng = np.random.default_rng(SEED)
    entries: list[dict[str, Any]] = []
    for (engine, nodes), games in sorted(by_budget.items(), key=lambda kv: kv[0][1]):
        train = [g for g in games if not held_out(g.id) and g.record["source"] in sources]
        test = [g for g in games if held_out(g.id) and g.record["source"] in sources]
        cal = fit_budget(train, engine, nodes, version)
        spent = costs[(engine, nodes)]
        plies = sum(len(r["evals"]) for r in spent)
        entry = {
            "id": cal.id, "engine": cal.engine, "engine_version": cal.engine_version,
            "nodes": nodes, "scale": cal.scale, "power": cal.power,
            "games": {"analysed": len(games), "fitted_on": len(train), "held_out": len(test),
                      "by_speed": {s: sum(1 for g in games if g.record["speed"] == s)
                                   for s in SPEEDS}},
            "held_out": {"uncalibrated": figures(test, None, rng),
                         "calibrated": figures(test, cal, rng)},
            "fitted": figures(train, cal, rng),
            # Lichess's evals are of their time: the rapid set's (88 % from 2022) run larger
            # than the 2020 PGN's and the bundled 2025 games' (docs/performance.md)
            "all_games_by_source": {
                src: {"uncalibrated": figures(part, None, rng),
                      "calibrated": figures(part, cal, rng)}
                for src in sources
                if (part := [g for g in games if g.record["source"] == src])},
            "cost": {"seconds_per_game": round(sum(r["wall"] for r in spent) / len(spent), 2),
                     "engine_nodes_per_second": round(
                         sum(r["nodes_searched"] for r in spent)
                         / max(1e-9, sum(r["engine_seconds"] for r in spent))),
                     "plies_per_game": round(plies / len(spent), 1),
                     "searched_per_game": round(sum(r["positions"] for r in spent)
                                                / len(spent), 1),
                     "nodes_per_game": round(sum(r["nodes_searched"] for r in spent)
                                             / len(spent))},
        }
        entries.append(entry)
    for entry in entries:
        held = entry["held_out"]["calibrated"]
        entry["offered"] = bool(entry["games"]["analysed"] >= MIN_GAMES
                                and held["games"] >= MIN_HELD_OUT and held["within_tolerance"])
    curve = budget_curve({k: [g for g in games if g.record["source"] in sources]
                          for k, games in by_budget.items()},
                         {e["nodes"]: e for e in entries}, rng)
    default = next((c["nodes"] for c in curve if c["offered"] and c["within_noise_of_next"]),
                   None)
    print(f"default budget: {default}")
    at_default = by_budget.get(next((k for k in by_budget if k[1] == default), ("", 0)), [])
    by_nodes = {e["nodes"]: e for e in entries}
    era = era_of(at_default, by_budget, by_nodes, default, rng)
    for entry in entries:
        print(render_entry(entry), flush=True)
    bundled = bundled_player(at_default, by_nodes.get(default or 0), rng)
    data = {
        "key": "engine-calibration", "version": version,
        "default_nodes": default,
        "default_rule": "the smallest offered budget whose calibrated per-game level is within "
                        "noise of the next larger budget's: on the games analysed at both, the "
                        "next budget reads the level closer to Lichess's evals (mean absolute "
                        f"difference, per player-game) by less than {NOISE:.0f} points at the "
                        "upper bound of the 90 % bootstrap interval",
        "curve": curve,
        "note": f"calibrations: the budgets offered (at least {MIN_GAMES} games analysed, within "
                "the tolerance on the held-out games), applied to local analyses; "
                "other_budgets: fitted the same way on fewer games, shown on the curve, not "
                "applied (an analysis at such a budget is read uncalibrated)",
        "formula": "cp' = sign(cp) * 100 * scale * (|cp| / 100) ^ power; mates unchanged",
        "fitted_by": "scripts/calibrate_engine.py fit",
        "data": {"cache": str(cache.resolve().relative_to(ROOT)) if cache.resolve().is_relative_to(
                     ROOT) else cache.name,
                 "lichess_evals": [str(RAPID), str(PGN), str(BUNDLED)],
                 "held_out": f"games whose sha256('engine-calibration:' + id)[0] % "
                             f"{HELD_OUT_SHARE} == 0",
                 "level_models": {s: m.name for s, m in sorted(models.items())},
                 "level_from_lichess_evals": "on the level model's training scale, as the "
                                             "product reads it (tracker.analysis.level."
                                             "on_training_scale: Lichess's evals of games "
                                             "from 2023 on × the lichess_era factor below); "
                                             "ACPL and accuracy from Lichess's evals as they "
                                             "are",
                 "fitted_and_held_out_on": list(sources),
                 "tolerance": TOLERANCE},
        "calibrations": [e for e in entries if e["offered"]],
        "other_budgets": [e for e in entries if not e["offered"]],
        "bundled_player": bundled,
        "lichess_era": era,
    }
    if out is None and folder is not None:
        out = output_file(data, folder, newest)
    if out is not None:
        out.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {out}")
    print(f"({time.perf_counter() - started:.0f} s)")
    return data


class Side(NamedTuple):
    """One side of a game read both ways: from Lichess's evals and from the calibrated local
    ones (their features and levels)."""

    game: Game
    index: int  # 0 White, 1 Black
    lichess: GameFeatures
    local: GameFeatures
    lichess_level: int
    local_level: int


def sides_read(games: list[Game], cal: EvalCalibration,
               lichess: Callable[[Game], list[PlyEval]]) -> list[Side]:
    """Every side of ``games`` whose moves both readings score: Lichess's evals as
    ``lichess(game)`` gives them, the local evals through ``cal``."""
    out: list[Side] = []
    for g in games:
        theirs, local = lichess(g), g.local_evals(cal)
        for i, color in enumerate(COLORS):
            a = level_features(theirs, color, clock=g.clock, sans=g.sans)
            b = level_features(local, color, clock=g.clock, sans=g.sans)
            if a.moves and b.moves:
                out.append(Side(g, i, a, b, game_level(g.model, a).estimate,
                                game_level(g.model, b).estimate))
    return out


def era_differences(games: list[Game], cal: EvalCalibration, factor: float
                    ) -> list[tuple[Game, int, float]]:
    """Per side of ``games`` (the game, 0 White / 1 Black): the level from the calibrated local
    evals minus the level from Lichess's evals × ``factor`` (where both have moves)."""
    era = LichessEra(ERA_FROM_MS, factor)
    return [(s.game, s.index, float(s.local_level - s.lichess_level))
            for s in sides_read(games, cal, lambda g: era.apply(g.lichess, g.played_at_ms))]


def era_factor(games: list[Game], cal: EvalCalibration) -> float:
    """The factor on Lichess's evals of ``games`` whose level differs from the calibrated local
    level by 0 on average over every side (bisection in :data:`ERA_RANGE`: the difference grows
    with the factor, as a larger factor makes Lichess's losses larger and its level lower)."""
    lo, hi = ERA_RANGE
    while hi - lo > ERA_PRECISION:
        mid = (lo + hi) / 2
        if np.mean([d for _, _, d in era_differences(games, cal, mid)]) < 0:
            lo = mid
        else:
            hi = mid
    return round((lo + hi) / 2, 3)


def fit_era(games: list[Game], entry: dict[str, Any] | None,
            rng: np.random.Generator) -> dict[str, Any] | None:
    """The factor of Lichess's normalised era, measured through the local engine: on the era's
    games that carry Lichess's evals, analysed locally at the default budget and read through
    its calibration (fitted on the older era's games only), the factor on Lichess's evals that
    puts their level on the calibrated local level (:func:`era_factor`). Held out by game: each
    game's difference at the factor fitted on the others. ``None`` without such games."""
    games = [g for g in games if g.played_at_ms is not None and g.played_at_ms >= ERA_FROM_MS]
    if not games or entry is None:
        return None
    cal = calibration_from_entry(entry)
    player = Counter(p for g in games for p in g.players if p).most_common(1)[0][0]
    factor = era_factor(games, cal)
    held: list[tuple[float, bool]] = []
    factors: list[float] = []
    for g in games:
        others = era_factor([h for h in games if h is not g], cal)
        factors.append(others)
        held += [(d, g.players[i] == player) for _, i, d in era_differences([g], cal, others)]

    def summary(values: list[float]) -> dict[str, Any]:
        return {"mean_signed": round(float(np.mean(values)), 1),
                "interval_90": interval(values, rng), "player_games": len(values)}

    at: dict[str, Any] = {}
    for label, f in (("measured", factor), ("assumed", ERA_ASSUMED)):
        sides = era_differences(games, cal, f)
        at[label] = {"factor": f, "all_sides": summary([d for _, _, d in sides]),
                     "his": summary([d for g, i, d in sides if g.players[i] == player])}
    out = {"from_ms": ERA_FROM_MS, "from": "2023-01-01", "factor": factor,
           "rule": "the factor on Lichess's evals of games played from 'from' on whose level "
                   "has a mean signed difference of 0 from the level of the same games' local "
                   "evals through the default budget's calibration (every side of every game; "
                   "the calibration fitted on Lichess's analyses of 2014-2022 only): the local "
                   "engine is the bridge between Lichess's eras",
           "fitted_on": {"source": str(BUNDLED), "player": player, "games": len(games),
                         "player_games": at["measured"]["all_sides"]["player_games"],
                         "calibration": cal.id},
           "leave_one_game_out": {
               "note": "each game's level difference at the factor fitted on the other games",
               "factors": [min(factors), max(factors)],
               "all_sides": summary([d for d, _ in held]),
               "his": summary([d for d, mine in held if mine])},
           "level_difference_at": at, "assumed_before": ERA_ASSUMED,
           "assumed_rule": "Stockfish 16.1's normalised pawn value 345 over the old 208"}
    loo = out["leave_one_game_out"]
    print(f"Lichess era from 2023-01-01: factor {factor} (assumed before: {ERA_ASSUMED}); held "
          f"out by game: level local − Lichess {loo['all_sides']['mean_signed']:+.1f} "
          f"{loo['all_sides']['interval_90']} (all sides), {loo['his']['mean_signed']:+.1f} "
          f"{loo['his']['interval_90']} ({player}); factors {loo['factors']}", flush=True)
    return out


def era_of(at_default: list[Game], by_budget: dict[tuple[str, int], list[Game]],
           by_nodes: dict[int, dict[str, Any]], default: int | None,
           rng: np.random.Generator) -> dict[str, Any] | None:
    """The era factor measured at the default budget (:func:`fit_era`), then the era's games
    of every budget read through it as the product will read them, their figures added to
    each budget's ``all_games_by_source``."""
    era = fit_era([g for g in at_default if g.record["source"] == ERA_SOURCE],
                  by_nodes.get(default or 0), rng)
    if era is None:
        return None
    measured = LichessEra(era["from_ms"], era["factor"])
    for (_, nodes), games in by_budget.items():
        part = [g for g in games if g.record["source"] == ERA_SOURCE]
        for g in part:
            g.read_era(measured)
        if part:
            cal = calibration_from_entry(by_nodes[nodes])
            by_nodes[nodes]["all_games_by_source"][ERA_SOURCE] = {
                "uncalibrated": figures(part, None, rng), "calibrated": figures(part, cal, rng)}
    return era


def bundled_player(games: list[Game], entry: dict[str, Any] | None,
                   rng: np.random.Generator) -> dict[str, Any] | None:
    """The bundled player's games Lichess analysed, at the default budget: his level per game
    and over the set (the level model of the games' speed, :func:`set_level`) from Lichess's
    evals against from the local evals calibrated; the mean signed difference local − Lichess
    of his per-game level (and of both sides')."""
    mine = [g for g in games if g.record["source"] == "bundled"]
    if not mine or entry is None:
        return None
    player = Counter(p for g in mine for p in g.players if p).most_common(1)[0][0]
    cal = calibration_from_entry(entry)
    rows, his, both = [], [], []
    sets: dict[str, list[Any]] = {"lichess": [], "local": []}
    for side in sides_read(mine, cal, lambda g: g.lichess_for_level):
        a, b = side.lichess_level, side.local_level
        both.append(b - a)
        if side.game.players[side.index] == player:
            his.append(b - a)
            sets["lichess"].append(side.lichess)
            sets["local"].append(side.local)
            rows.append({"id": side.game.id, "color": COLORS[side.index], "lichess": a,
                         "local": b})
    model = mine[0].model
    levels = {k: set_level(model, v) for k, v in sets.items()}
    out = {"player": player, "nodes": entry["nodes"], "calibration": cal.id,
           "level_model": model.name, "games": len(his),
           "his_level_mean_signed": round(float(np.mean(his)), 1),
           "his_level_interval_90": interval(his, rng),
           "both_sides_level_mean_signed": round(float(np.mean(both)), 1),
           "both_sides_interval_90": interval(both, rng), "both_sides_player_games": len(both),
           "set": {k: {"estimate": v.estimate, "low": v.low, "high": v.high}
                   for k, v in levels.items()},
           "per_game": rows}
    print(f"bundled player {player}, {len(his)} games at {entry['nodes']:,} nodes: level local "
          f"− Lichess {out['his_level_mean_signed']:+.1f} {out['his_level_interval_90']} "
          f"(both sides {out['both_sides_level_mean_signed']:+.1f} "
          f"{out['both_sides_interval_90']}, {len(both)}); set: Lichess "
          f"{levels['lichess'].estimate} ({levels['lichess'].low}–{levels['lichess'].high}), "
          f"local {levels['local'].estimate} ({levels['local'].low}–{levels['local'].high})",
          flush=True)
    return out


def output_file(data: dict[str, Any], folder: Path, newest: Path | None) -> Path:
    """Where ``fit`` writes ``data`` (numbered one past ``newest``) in ``folder``: ``newest``
    again where it applies the same numbers (``data`` renumbered to its version: the same
    ids), else the next version's file."""
    if newest is not None and data["version"] == file_version(newest) + 1 and _numbers(
            json.loads(newest.read_text(encoding="utf-8"))) == _numbers(data):
        version = data["version"] = file_version(newest)
        for e in data["calibrations"] + data["other_budgets"]:
            e["id"] = calibration_of(f"{e['engine']} {e['engine_version']}", e["nodes"],
                                     e["scale"], e["power"], version).id
        for part in (data["bundled_player"], (data["lichess_era"] or {}).get("fitted_on")):
            if part is not None:
                part["calibration"] = f"{part['calibration'].rsplit('-', 1)[0]}-{version}"
    return folder / f"engine-calibration-{data['version']}.json"


def budget_curve(by_budget: dict[tuple[str, int], list[Game]], entries: dict[int, Any],
                 rng: np.random.Generator) -> list[dict[str, Any]]:
    """Per budget, smallest first: its mean absolute level difference against Lichess's evals
    (calibrated), and against the next larger budget on the games analysed at both, whether
    it is within noise of it (the interval of the paired difference holds 0)."""
    levels: dict[int, dict[tuple[str, int], float]] = {}
    for (_, nodes), games in by_budget.items():
        cal = calibration_from_entry(entries[nodes])
        levels[nodes] = {(g.id, i): abs(side[2]) for g in games
                         for i, side in enumerate(g.differences(cal)) if side[2] is not None}
    budgets = sorted(levels)
    out: list[dict[str, Any]] = []
    for i, nodes in enumerate(budgets):
        row: dict[str, Any] = {
            "nodes": nodes, "offered": entries[nodes]["offered"],
            "games": entries[nodes]["games"]["analysed"],
            "level_mean_absolute": round(float(np.mean(list(levels[nodes].values()))), 1),
            "seconds_per_game_here": entries[nodes]["cost"]["seconds_per_game"],
            "nodes_per_game": entries[nodes]["cost"]["nodes_per_game"]}
        if i + 1 < len(budgets):
            nxt = budgets[i + 1]
            both = sorted(set(levels[nodes]) & set(levels[nxt]))
            diffs = [levels[nodes][k] - levels[nxt][k] for k in both]
            low, high = interval(diffs, rng)
            row.update({"next": nxt, "paired_player_games": len(both),
                        "minus_next_mean_absolute": round(float(np.mean(diffs)), 1),
                        "minus_next_interval_90": [low, high],
                        "within_noise_of_next": bool(high < NOISE)})
        else:
            row["within_noise_of_next"] = False  # nothing larger to compare with
        out.append(row)
        print(f"  {nodes:>7,} nodes: |level − Lichess| {row['level_mean_absolute']}"
              + (f"; − next ({row['next']:,}, {row['paired_player_games']} player-games) "
                 f"{row['minus_next_mean_absolute']:+.1f} {row['minus_next_interval_90']}"
                 if "next" in row else ""), flush=True)
    return out


def calibration_from_entry(e: dict[str, Any]) -> EvalCalibration:
    return EvalCalibration(e["id"], e["engine"], e["engine_version"], e["nodes"], e["scale"],
                           e["power"])


def render_entry(e: dict[str, Any]) -> str:
    """One budget's figures in plain lines."""
    lines = [f"{e['id']}: scale {e['scale']}, power {e['power']}; {e['games']['analysed']} "
             f"games ({e['games']['held_out']} held out); {e['cost']['seconds_per_game']} s "
             f"a game here, {e['cost']['nodes_per_game']:,} nodes a game"]
    rows = [("held out, raw", e["held_out"]["uncalibrated"]),
            ("held out, calibrated", e["held_out"]["calibrated"]),
            ("fitted, calibrated", e["fitted"])]
    rows += [(f"all {src}, {k}", f[k]) for src, f in e["all_games_by_source"].items()
             for k in ("uncalibrated", "calibrated")]
    for label, f in rows:
        lines.append(f"  {label:<26} ACPL {f['acpl_mean_signed']:+6.1f} {f['acpl_interval_90']}"
                     f"  accuracy {f['accuracy_mean_signed']:+5.2f} {f['accuracy_interval_90']}"
                     f"  level {f['level_mean_signed']:+6.1f} {f['level_interval_90']}"
                     f"  |level| {f['level_mean_absolute']}  n {f['player_games']}")
    return "\n".join(lines)


def compare(shared: Path, cache: Path, other: Path, calibration_file: Path) -> None:
    """The games of ``other`` (e.g. analysed with the hash cleared at every ply) against the
    same games at the same budget in ``cache``: time, nodes/s, and how far each reads from
    Lichess's evals (both through the budget's calibration)."""
    mine = {(r["id"], r["nodes"]): r for r in read_cache(cache)}
    theirs = [r for r in read_cache(other) if (r["id"], r["nodes"]) in mine]
    lichess = lichess_evals(shared, {r["id"] for r in theirs})
    entries = {e["nodes"]: calibration_from_entry(e) for e in json.loads(
        calibration_file.read_text(encoding="utf-8"))["calibrations"]}
    rng = np.random.default_rng(SEED)
    models = newest_level_models()
    rows: dict[str, list[list[float]]] = {"cache": [], "other": []}
    seconds = {"cache": 0.0, "other": 0.0}
    nodes = {"cache": 0, "other": 0}
    engine_s = {"cache": 0.0, "other": 0.0}
    for r in theirs:
        if r["id"] not in lichess:
            continue
        model = models[r["speed"]]
        for label, rec in (("cache", mine[(r["id"], r["nodes"])]), ("other", r)):
            game = Game(rec, lichess[r["id"]], model)
            rows[label] += [[abs(v) if v is not None else float("nan") for v in side]
                            for side in game.differences(entries.get(rec["nodes"]))]
            seconds[label] += rec["wall"]
            nodes[label] += rec["nodes_searched"]
            engine_s[label] += rec["engine_seconds"]
    for label in rows:
        arr = np.asarray(rows[label])
        print(f"{label}: {len(theirs)} games, {seconds[label]:.1f} s, "
              f"{nodes[label] / max(1e-9, engine_s[label]):,.0f} nodes/s (engine), "
              f"{nodes[label] / max(1e-9, seconds[label]):,.0f} nodes/s (wall); mean |local − "
              f"Lichess|: ACPL {np.nanmean(arr[:, 0]):.1f}, accuracy {np.nanmean(arr[:, 1]):.2f}"
              f", level {np.nanmean(arr[:, 2]):.1f}")
    diff = np.asarray(rows["other"])[:, 2] - np.asarray(rows["cache"])[:, 2]
    diff = diff[~np.isnan(diff)]
    print(f"level: other − cache {diff.mean():+.1f} {interval(list(diff), rng)} (90 %)")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("collect", help="analyse the sample with the local engine")
    c.add_argument("--shared", type=Path, default=SHARED)
    c.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    c.add_argument("--games", type=int, default=300)
    c.add_argument("--engine", default=None)
    c.add_argument("--only", type=int, default=None, help="this budget only")
    c.add_argument("--fresh-hash", action="store_true",
                   help="clear the hash before every search (the yardstick of keeping it)")
    f = sub.add_parser("fit", help="fit the calibrations from the cache (no engine)")
    f.add_argument("--shared", type=Path, default=SHARED)
    f.add_argument("--cache", type=Path, default=SHIPPED_CACHE)
    f.add_argument("--out", type=Path, default=None,
                   help="write here (default: the models folder's newest "
                        "engine-calibration-<N>.json if what it applies is unchanged, else N+1)")
    f.add_argument("--dry-run", action="store_true", help="print, write nothing")
    f.add_argument("--sources", default=",".join(FIT_SOURCES),
                   help="fit on these sources' games (rapid, pgn, bundled)")
    k = sub.add_parser("compare", help="another cache's games against the same at the same "
                       "budget (e.g. the hash cleared at every ply)")
    k.add_argument("other", type=Path)
    k.add_argument("--shared", type=Path, default=SHARED)
    k.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    k.add_argument("--calibrations", type=Path, default=CALIBRATION_FILE)
    args = parser.parse_args(argv)
    if args.command == "compare":
        compare(args.shared, args.cache, args.other, args.calibrations)
    elif args.command == "collect":
        collect(args.shared, args.cache, args.games, args.engine, args.only, args.fresh_hash)
    else:
        fit(args.shared, args.cache, None if args.dry_run else args.out,
            tuple(args.sources.split(",")), None if args.dry_run else CALIBRATION_FILE.parent)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
