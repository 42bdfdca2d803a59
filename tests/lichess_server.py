"""A local Lichess-compatible HTTP server for the tests: real HTTP on 127.0.0.1, no internet.

It serves the endpoints the importer uses, following ``shared/spec/LICHESS.md`` point by point:

- ``GET /api/games/user/{u}``: NDJSON (``Accept: application/x-ndjson``) or PGN (anything
  else), streamed with chunked transfer encoding; newest first unless ``sort=dateAsc``;
  ``since`` (inclusive) and ``until`` (exclusive) in integer ms on ``createdAt`` — on
  ``lastMoveAt`` (window *and* order) when ``rated``, ``perfType``, ``color`` or ``analysed``
  is given, as Lichess then answers from its search index; ``max``, ``perfType`` (comma list),
  ``rated``, ``color``, ``vs``, ``analysed``, ``ongoing`` (off), ``finished`` (on); booleans
  ``true``/``True``/``1``. A ``since``/``until`` that is not an integer is ignored, silently,
  like a wrong window on Lichess. Unknown or closed user: 404 with an empty body. A second
  download while one runs: 429 ``Please only run 1 request(s) at a time``.
- ``GET /api/user/{u}``: the profile, with ``count.all`` and per-perf ``games`` computed from
  the games; unknown: 404 ``{"error":"Not found"}``; closed: 200 with ``"disabled": true``.
- ``GET /api/user/{u}/rating-history``: the list given to :meth:`LichessServer.add_user`
  (0-based months); ``[]`` without a token (since 2026 Lichess computes it only for token
  requests); 404 for unknown or closed users.
- ``GET /api/fide/player/{id}`` and ``GET /api/fide/player/{id}/ratings``: FIDE's profile and
  monthly lists (entries ``YYYYMMRRRR``), byte for byte as given to
  :meth:`LichessServer.add_fide_player`; every server starts with the real answers for FIDE id
  35009192 (``fixtures/lichess/api-examples/api-fide-player_35009192*.json``). Unknown id:
  404 ``{"error":"Not found"}``.
- Every endpoint answers 404 with an HTML page to a User-Agent containing ``python-requests``,
  ``python-urllib``, ``curl`` and similar, as Lichess does.

NDJSON games are served byte for byte as given (the real export lines), so an API import and a
file import of the same export can be compared row for row.

Faults are injected per test (:meth:`LichessServer.fail_429`, :meth:`cut_after`,
:meth:`stall_after`, :meth:`truncate_after`; for the FIDE endpoints :meth:`fail_fide` and
:meth:`fault_fide`: a gzip bomb, an answer trickled a byte at a time); each hits the next
``times`` game downloads, or FIDE answers (``None``: every one). The server records every
request (:attr:`LichessServer.requests`) with its User-Agent, Authorization header, status and
the number of games it served.

>>> with LichessServer() as server:  # doctest: +SKIP
...     server.add_user("indexinator", ndjson_lines(INDEXINATOR))
...     server.url
'http://127.0.0.1:40123'
"""

from __future__ import annotations

import contextlib
import json
import re
import select
import socket
import threading
import time
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Final
from urllib.parse import parse_qsl, unquote, urlsplit

#: User-Agents Lichess answers with its HTML 404 page (spec: "and similar").
BLOCKED_AGENTS: Final = (
    "python-requests", "python-urllib", "curl", "wget", "python-httpx", "go-http-client",
)
NOT_FOUND_HTML: Final = (
    b"<!DOCTYPE html><html><head><title>Page not found</title></head>"
    b"<body><h1>404</h1><p>Page not found!</p></body></html>"
)
TOO_MANY: Final = {"error": "Too many requests. Try again later."}
ONE_AT_A_TIME: Final = {"error": "Please only run 1 request(s) at a time"}
#: Parameters that make Lichess answer from its search index (window and order on lastMoveAt).
SEARCH_PARAMS: Final = ("rated", "perfType", "color", "analysed")
#: Statuses of games not finished yet (exported only with ``ongoing=true``).
ONGOING_STATUSES: Final = frozenset({"created", "started"})
#: Bytes buffered before a chunk is sent when not throttled (one chunk per game when throttled).
CHUNK_BYTES: Final = 32 * 1024

_GAMES = re.compile(r"^/api/games/user/([^/]+)$")
_HISTORY = re.compile(r"^/api/user/([^/]+)/rating-history$")
_USER = re.compile(r"^/api/user/([^/]+)$")
_FIDE_PLAYER = re.compile(r"^/api/fide/player/([^/]+)$")
_FIDE_RATINGS = re.compile(r"^/api/fide/player/([^/]+)/ratings$")
#: The real FIDE answers every server starts with (Lichess's, recorded by berserk's tests).
FIDE_EXAMPLES: Final = Path(__file__).parent / "fixtures" / "lichess" / "api-examples"
REAL_FIDE_ID: Final = 35009192


def ndjson_lines(path: str | Path) -> list[str]:
    """The non-empty lines of an NDJSON export, without their newline."""
    with open(path, encoding="utf-8") as f:
        return [line.rstrip("\r\n") for line in f if line.strip()]


def truthy(value: str | None) -> bool | None:
    """A Lichess boolean parameter: ``true``, ``True`` and ``1`` are true; absent is ``None``."""
    if value is None:
        return None
    return value in ("true", "True", "1")


def _int(value: str | None) -> int | None:
    if value is None:
        return None
    try:
        return int(value)
    except ValueError:
        return None  # Lichess silently ignores a malformed window (spec: "silently wrong")


@dataclass
class ServedGame:
    """One game as the server holds it: the parsed object and the exact line it serves."""

    obj: dict[str, Any]
    line: bytes

    @classmethod
    def from_line(cls, line: str) -> ServedGame:
        return cls(json.loads(line), line.encode("utf-8"))

    @classmethod
    def from_obj(cls, obj: dict[str, Any]) -> ServedGame:
        text = json.dumps(obj, separators=(",", ":"), ensure_ascii=False)
        return cls(obj, text.encode("utf-8"))

    @property
    def id(self) -> str:
        return self.obj["id"]

    def time(self, key: str) -> int:
        return int(self.obj.get(key) or self.obj["createdAt"])

    @property
    def ongoing(self) -> bool:
        return self.obj.get("status") in ONGOING_STATUSES


@dataclass
class Account:
    username: str
    games: list[ServedGame] = field(default_factory=list)
    disabled: bool = False
    rating_history: list[Any] = field(default_factory=list)
    created_at_ms: int = 1_681_900_000_000


@dataclass
class Fault:
    """One injected fault. ``kind``: ``429`` (answered before the stream), ``cut`` (connection
    dropped after ``after`` games), ``stall`` (silence for ``seconds`` after ``after`` games),
    ``truncate`` (``keep`` bytes of the next line, then a clean end of stream)."""

    kind: str
    after: int = 0
    times: int | None = 1
    seconds: float = 0.0
    keep: int | None = None
    skip: int = 0
    game_id: str | None = None


@dataclass
class ServedRequest:
    """What the server saw and answered (``games``: game objects sent, complete or not)."""

    method: str
    path: str
    query: dict[str, str]
    user_agent: str | None
    authorization: str | None
    accept: str | None
    status: int = 0
    games: int = 0


class LichessServer:
    """The local Lichess. ``throttle``: games per second per download (``None``: as fast as
    possible); ``tokens``: the valid API tokens (``None``: any bearer token is accepted);
    ``port``: 0 picks a free one."""

    def __init__(self, *, throttle: float | None = None,
                 tokens: Sequence[str] | None = None, port: int = 0) -> None:
        self.throttle = throttle
        self.port = port
        self.tokens = set(tokens) if tokens is not None else None
        self.accounts: dict[str, Account] = {}
        #: FIDE id (as text) -> (profile body, ratings body), served byte for byte.
        self.fide_players: dict[str, tuple[bytes, bytes]] = {}
        self.fide_failures: list[int] = []
        self.fide_faults: list[tuple[str, float]] = []
        self.faults: list[Fault] = []
        self.requests: list[ServedRequest] = []
        self._lock = threading.Lock()
        self._downloads = 0
        self._stopping = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.add_fide_player(
            REAL_FIDE_ID,
            (FIDE_EXAMPLES / f"api-fide-player_{REAL_FIDE_ID}.json").read_bytes(),
            (FIDE_EXAMPLES / f"api-fide-player_{REAL_FIDE_ID}_ratings.json").read_bytes(),
        )

    # -- data --------------------------------------------------------------------------------

    def add_user(self, username: str, games: Iterable[str | dict[str, Any]] = (), *,
                 disabled: bool = False, rating_history: list[Any] | None = None) -> Account:
        """Create (or replace) an account with its games (NDJSON lines or objects)."""
        account = Account(username, disabled=disabled, rating_history=rating_history or [])
        with self._lock:
            self.accounts[username.lower()] = account
        self.add_games(username, games)
        return account

    def add_games(self, username: str, games: Iterable[str | dict[str, Any]]) -> None:
        """Add games to an account (a game with a known id replaces the old copy)."""
        new = [ServedGame.from_line(g) if isinstance(g, str) else ServedGame.from_obj(g)
               for g in games]
        with self._lock:
            account = self.accounts[username.lower()]
            ids = {g.id for g in new}
            account.games = [g for g in account.games if g.id not in ids] + new
            account.games.sort(key=lambda g: g.time("createdAt"), reverse=True)

    def replace_line(self, username: str, game_id: str, line: bytes) -> None:
        """A fault: serve ``line`` (anything: not JSON, huge, a game with broken values) in
        place of the stored game ``game_id``, at its place in every download (NDJSON only)."""
        with self._lock:
            account = self.accounts[username.lower()]
            for i, g in enumerate(account.games):
                if g.id == game_id:
                    account.games[i] = ServedGame(g.obj, line)
                    return
        raise KeyError(game_id)

    def update_game(self, username: str, game_id: str, **changes: Any) -> None:
        """Change fields of a stored game (e.g. finish an ongoing one: ``status``, ``winner``,
        ``lastMoveAt``); the line served is re-serialised."""
        with self._lock:
            account = self.accounts[username.lower()]
            for i, g in enumerate(account.games):
                if g.id == game_id:
                    account.games[i] = ServedGame.from_obj({**g.obj, **changes})
                    return
        raise KeyError(game_id)

    def add_fide_player(self, fide_id: int | str, profile: bytes | dict[str, Any],
                        ratings: bytes | dict[str, Any]) -> None:
        """Serve a FIDE player (or replace one): the two answers as bytes or JSON objects."""
        bodies = tuple(b if isinstance(b, bytes) else json.dumps(b).encode()
                       for b in (profile, ratings))
        with self._lock:
            self.fide_players[str(fide_id)] = (bodies[0], bodies[1])

    def fail_fide(self, status: int = 429, times: int = 1) -> None:
        """The next ``times`` FIDE requests get ``status`` (429: ``Too many requests``)."""
        with self._lock:
            self.fide_failures.extend([status] * times)

    def fault_fide(self, kind: str, amount: float, times: int = 1) -> None:
        """The next ``times`` FIDE answers are hostile: ``"gzip-bomb"``, a gzip body of
        ``amount`` bytes of zeros (``Content-Encoding: gzip``, ~1,000 times smaller on the
        wire); ``"trickle"``, the right answer sent one byte every ``amount`` seconds;
        ``"cut"``, the connection closed after ``amount`` bytes of the answer."""
        with self._lock:
            self.fide_faults.extend([(kind, amount)] * times)

    def fide_requests(self) -> list[ServedRequest]:
        return [r for r in self.requests if r.path.startswith("/api/fide/")]

    # -- faults ------------------------------------------------------------------------------

    def fail_429(self, times: int | None = 1, skip: int = 0) -> None:
        """After ``skip`` game downloads, the next ``times`` get ``429 Too many requests``."""
        self.faults.append(Fault("429", times=times, skip=skip))

    def cut_after(self, games: int, times: int | None = 1) -> None:
        """Drop the connection (no end of chunked stream) after ``games`` games."""
        self.faults.append(Fault("cut", after=games, times=times))

    def stall_after(self, games: int, seconds: float, times: int | None = 1) -> None:
        """Send nothing for ``seconds`` after ``games`` games (ends early if the client hangs
        up), then go on."""
        self.faults.append(Fault("stall", after=games, seconds=seconds, times=times))

    def truncate_after(self, games: int, keep: int | None = None,
                       times: int | None = 1, game_id: str | None = None) -> None:
        """After ``games`` games (or at the game ``game_id``, wherever a download has it),
        send the first ``keep`` bytes of the line (default: half of it) and end the stream
        cleanly, as a server that dies mid-line would."""
        self.faults.append(Fault("truncate", after=games, keep=keep, times=times,
                                 game_id=game_id))

    def _take_fault(self, kinds: tuple[str, ...]) -> Fault | None:
        with self._lock:
            for fault in self.faults:
                if fault.kind in kinds and (fault.times is None or fault.times > 0):
                    if fault.skip > 0:
                        fault.skip -= 1
                        continue
                    if fault.times is not None:
                        fault.times -= 1
                    return fault
        return None

    # -- what was served ---------------------------------------------------------------------

    def game_requests(self) -> list[ServedRequest]:
        return [r for r in self.requests if r.path.startswith("/api/games/user/")]

    @property
    def served_games(self) -> int:
        """Game objects sent so far, over all downloads."""
        return sum(r.games for r in self.requests)

    def reset_log(self) -> None:
        with self._lock:
            self.requests.clear()

    # -- life cycle --------------------------------------------------------------------------

    @property
    def url(self) -> str:
        assert self._httpd is not None, "server not started"
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> LichessServer:
        server = self

        class Handler(_Handler):
            lichess = server

        self._httpd = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self._httpd.daemon_threads = True
        self._httpd.block_on_close = False
        self._thread = threading.Thread(target=self._httpd.serve_forever,
                                        kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(5)

    def __enter__(self) -> LichessServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- selection ---------------------------------------------------------------------------

    def select_games(self, username: str, q: dict[str, str]) -> list[ServedGame] | None:
        """The games ``/api/games/user/{username}`` answers for query ``q``; ``None``: 404."""
        with self._lock:
            account = self.accounts.get(username.lower())
            if account is None or account.disabled:
                return None
            games = list(account.games)
        uid = username.lower()
        search = any(p in q for p in SEARCH_PARAMS)
        key = "lastMoveAt" if search else "createdAt"
        since, until, limit = _int(q.get("since")), _int(q.get("until")), _int(q.get("max"))
        perfs = set(q["perfType"].split(",")) if q.get("perfType") else None
        rated, analysed = truthy(q.get("rated")), truthy(q.get("analysed"))
        ongoing = truthy(q.get("ongoing")) or False
        finished = truthy(q.get("finished"))
        finished = True if finished is None else finished
        color, vs = q.get("color"), (q.get("vs") or "").lower() or None
        out = []
        for g in games:
            o = g.obj
            if (g.ongoing and not ongoing) or (not g.ongoing and not finished):
                continue
            t = g.time(key)
            if (since is not None and t < since) or (until is not None and t >= until):
                continue
            if perfs is not None and o.get("perf") not in perfs:
                continue
            if rated is not None and bool(o.get("rated")) != rated:
                continue
            if analysed is not None and ("analysis" in o) != analysed:
                continue
            players = o.get("players") or {}
            ids = {c: ((players.get(c) or {}).get("user") or {}).get("id") for c in
                   ("white", "black")}
            if color in ("white", "black") and ids[color] != uid:
                continue
            if vs is not None and vs not in ids.values():
                continue
            out.append(g)
        out.sort(key=lambda g: g.time(key), reverse=q.get("sort") != "dateAsc")
        return out[:limit] if limit is not None and limit >= 0 else out

    def profile(self, username: str) -> dict[str, Any] | None:
        with self._lock:
            account = self.accounts.get(username.lower())
        if account is None:
            return None
        base = {"id": account.username.lower(), "username": account.username,
                "createdAt": account.created_at_ms}
        if account.disabled:
            return {**base, "disabled": True}
        perfs: dict[str, dict[str, Any]] = {}
        rated = 0
        for g in account.games:
            if g.ongoing:
                continue
            o = g.obj
            rated += bool(o.get("rated"))
            p = perfs.setdefault(o.get("perf") or "unknown", {"games": 0})
            p["games"] += 1
            side = _side_of(o, account.username.lower())
            if side and "rating" in side and "rating" not in p:
                p.update(rating=side["rating"] + side.get("ratingDiff", 0), rd=60, prog=0)
        seen = max((g.time("lastMoveAt") for g in account.games), default=account.created_at_ms)
        total = sum(p["games"] for p in perfs.values())
        return {**base, "seenAt": seen, "perfs": perfs,
                "count": {"all": total, "rated": rated, "ai": 0}}


def _side_of(obj: dict[str, Any], uid: str) -> dict[str, Any] | None:
    for color in ("white", "black"):
        side = (obj.get("players") or {}).get(color) or {}
        if (side.get("user") or {}).get("id") == uid:
            return side
    return None


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # TCP_NODELAY, as Lichess's front servers send: the handler writes the status line, the
    # headers and the body in separate small writes, and with Nagle's algorithm each answer
    # after the first segment waited for the client's delayed ACK (~40 ms on Linux loopback):
    # 46 ms a request against 1.8 ms without, measured on a keep-alive session.
    disable_nagle_algorithm = True
    lichess: LichessServer

    def log_message(self, format: str, *args: Any) -> None:
        pass  # quiet: the tests read LichessServer.requests

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        path = unquote(parts.path)
        query = dict(parse_qsl(parts.query, keep_blank_values=True))
        record = ServedRequest(
            "GET", path, query, self.headers.get("User-Agent"),
            self.headers.get("Authorization"), self.headers.get("Accept"),
        )
        with self.lichess._lock:
            self.lichess.requests.append(record)
        try:
            self._route(path, query, record)
        except (BrokenPipeError, ConnectionResetError, TimeoutError):
            self.close_connection = True

    # -- answers -------------------------------------------------------------------------------

    def _send(self, record: ServedRequest, status: int, body: bytes,
              content_type: str = "application/json") -> None:
        record.status = status
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _json(self, record: ServedRequest, status: int, obj: Any) -> None:
        self._send(record, status, json.dumps(obj).encode())

    def _route(self, path: str, query: dict[str, str], record: ServedRequest) -> None:
        agent = (record.user_agent or "").lower()
        if any(bad in agent for bad in BLOCKED_AGENTS):
            self._send(record, 404, NOT_FOUND_HTML, "text/html; charset=utf-8")
            return
        token = None
        auth = record.authorization
        if auth is not None:
            token = auth.removeprefix("Bearer ").strip()
            if self.lichess.tokens is not None and token not in self.lichess.tokens:
                self._json(record, 401, {"error": "No such token"})
                return
        if m := _GAMES.match(path):
            self._games(m.group(1), query, record)
        elif m := _HISTORY.match(path):
            self._history(m.group(1), record, with_token=token is not None)
        elif m := _FIDE_RATINGS.match(path):
            self._fide(m.group(1), 1, record)
        elif m := _FIDE_PLAYER.match(path):
            self._fide(m.group(1), 0, record)
        elif m := _USER.match(path):
            profile = self.lichess.profile(m.group(1))
            if profile is None:
                self._json(record, 404, {"error": "Not found"})
            else:
                self._json(record, 200, profile)
        else:
            self._send(record, 404, NOT_FOUND_HTML, "text/html; charset=utf-8")

    def _fide(self, fide_id: str, which: int, record: ServedRequest) -> None:
        with self.lichess._lock:
            failure = self.lichess.fide_failures.pop(0) if self.lichess.fide_failures else None
        if failure is not None:
            self._json(record, failure, TOO_MANY if failure == 429 else {"error": "Failure"})
            return
        bodies = self.lichess.fide_players.get(fide_id)
        if bodies is None:
            self._json(record, 404, {"error": "Not found"})
            return
        with self.lichess._lock:
            fault = self.lichess.fide_faults.pop(0) if self.lichess.fide_faults else None
        if fault is None:
            self._send(record, 200, bodies[which])
        elif fault[0] == "gzip-bomb":
            self._gzip_bomb(record, int(fault[1]))
        elif fault[0] == "cut":
            body = bodies[which]
            record.status = 200
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body[: int(fault[1])])
            self.close_connection = True
        else:
            self._trickle(record, bodies[which], fault[1])

    def _gzip_bomb(self, record: ServedRequest, size: int) -> None:
        packer = zlib.compressobj(9, zlib.DEFLATED, 31)  # a gzip stream
        zeros = bytes(1 << 20)
        parts = [packer.compress(zeros[: min(len(zeros), size - done)])
                 for done in range(0, size, len(zeros))]
        body = b"".join([*parts, packer.flush()])
        record.status = 200
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _trickle(self, record: ServedRequest, body: bytes, seconds: float) -> None:
        record.status = 200
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        for i in range(len(body)):
            self.wfile.write(body[i : i + 1])
            self.wfile.flush()
            if self.lichess._stopping.wait(seconds):
                return

    def _history(self, username: str, record: ServedRequest, *, with_token: bool) -> None:
        account = self.lichess.accounts.get(username.lower())
        if account is None or account.disabled:
            self._json(record, 404, {"error": "Not found"})
        else:
            self._json(record, 200, account.rating_history if with_token else [])

    def _games(self, username: str, query: dict[str, str], record: ServedRequest) -> None:
        games = self.lichess.select_games(username, query)
        if games is None:
            self._send(record, 404, b"")
            return
        server = self.lichess
        with server._lock:
            busy = server._downloads > 0
            if not busy:
                server._downloads += 1
        if busy:
            self._json(record, 429, ONE_AT_A_TIME)
            return
        held = True

        def release() -> None:
            # called before the last bytes go out: a client that read the whole answer may
            # start its next download at once
            nonlocal held
            if held:
                held = False
                with server._lock:
                    server._downloads -= 1

        try:
            if server._take_fault(("429",)) is not None:
                release()
                self._json(record, 429, TOO_MANY)
                return
            self._stream(games, record, release)
        finally:
            release()

    def _stream(self, games: list[ServedGame], record: ServedRequest,
                release: Callable[[], None]) -> None:
        ndjson = "application/x-ndjson" in (record.accept or "")
        fault = self.lichess._take_fault(("cut", "stall", "truncate"))
        throttle = self.lichess.throttle
        record.status = 200
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson" if ndjson
                         else "application/x-chess-pgn; charset=utf-8")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        buffer: list[bytes] = []
        size = 0
        started = time.perf_counter()

        def flush() -> None:
            nonlocal size
            if buffer:
                data = b"".join(buffer)
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                buffer.clear()
                size = 0
            self.wfile.flush()

        for i, game in enumerate(games):
            if fault is not None and (
                game.id == fault.game_id if fault.game_id else i == fault.after
            ):
                flush()
                if fault.kind == "cut":
                    release()
                    self._hang_up()
                    return
                if fault.kind == "stall":
                    self._stall(fault.seconds)
                elif fault.kind == "truncate":
                    line = served_line(game, record.query) if ndjson else game_to_pgn(
                        game.obj).encode()
                    keep = fault.keep if fault.keep is not None else len(line) // 2
                    buffer.append(line[:keep])
                    record.games += 1
                    break
            data = (served_line(game, record.query) + b"\n" if ndjson
                    else game_to_pgn(game.obj, evals=bool(truthy(record.query.get("evals"))))
                    .encode() + b"\n")
            buffer.append(data)
            size += len(data)
            record.games += 1
            if throttle:
                flush()
                delay = started + (i + 1) / throttle - time.perf_counter()
                if delay > 0:
                    time.sleep(delay)
            elif size >= CHUNK_BYTES:
                flush()
        else:
            if fault is not None and fault.after >= len(games) and fault.kind == "cut":
                flush()
                release()
                self._hang_up()
                return
        flush()
        release()
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _hang_up(self) -> None:
        """Close the connection without the chunked stream's end: a connection cut."""
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)

    def _stall(self, seconds: float) -> None:
        """Send nothing for ``seconds``; stop waiting when the client hangs up (Lichess notices
        a closed connection too, and frees the download slot)."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and not self.lichess._stopping.is_set():
            readable, _, _ = select.select([self.connection], [], [], 0.02)
            if readable:
                try:
                    if self.connection.recv(1, socket.MSG_PEEK) == b"":
                        raise ConnectionResetError("client hung up")
                except BlockingIOError:
                    pass


# -- PGN -------------------------------------------------------------------------------------

_VARIANT_NAMES: Final = {
    "standard": "Standard", "chess960": "Chess960", "crazyhouse": "Crazyhouse",
    "antichess": "Antichess", "atomic": "Atomic", "horde": "Horde",
    "kingOfTheHill": "King of the Hill", "racingKings": "Racing Kings",
    "threeCheck": "Three-check", "fromPosition": "From Position",
}
_TERMINATION: Final = {
    "outoftime": "Time forfeit", "timeout": "Abandoned", "cheat": "Rules infraction",
}


def served_line(game: ServedGame, query: dict[str, str]) -> bytes:
    """The game's line as Lichess sends it for ``query``: its server analysis (``analysis[]``
    and the players' ``analysis`` {inaccuracy, mistake, blunder, acpl}) only with
    ``evals=true``, the players' ``accuracy`` in it only with ``accuracy=true`` too."""
    if b'"analysis"' not in game.line:
        return game.line
    evals, accuracy = truthy(query.get("evals")), truthy(query.get("accuracy"))
    if evals and accuracy:
        return game.line
    obj = json.loads(game.line)
    if not evals:
        obj.pop("analysis", None)
    for side in (obj.get("players") or {}).values():
        if isinstance(side, dict) and isinstance(side.get("analysis"), dict):
            if not evals:
                del side["analysis"]
            elif not accuracy:
                side["analysis"].pop("accuracy", None)
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def _pgn_name(side: dict[str, Any]) -> str:
    user = side.get("user") or {}
    if user.get("name"):
        return user["name"]
    if side.get("aiLevel"):
        return f"lichess AI level {side['aiLevel']}"
    return side.get("name") or "Anonymous"


def game_to_pgn(obj: dict[str, Any], evals: bool = False) -> str:
    """A game object as Lichess writes it in a PGN export (tags, movetext, blank line); with
    ``evals``, each analysed move followed by ``{ [%eval 0.23] }`` / ``{ [%eval #-3] }``."""
    created = datetime.fromtimestamp(obj["createdAt"] / 1000, tz=UTC)
    players = obj.get("players") or {}
    white, black = players.get("white") or {}, players.get("black") or {}
    winner = obj.get("winner")
    if obj.get("status") in ONGOING_STATUSES:
        result = "*"
    else:
        result = {"white": "1-0", "black": "0-1"}.get(winner or "", "1/2-1/2")
    speed = obj.get("speed") or "correspondence"
    variant = obj.get("variant") or "standard"
    event_kind = speed.capitalize() if variant in ("standard", "fromPosition") else \
        _VARIANT_NAMES.get(variant, variant)
    clock = obj.get("clock")
    tags: list[tuple[str, str]] = [
        ("Event", f"{'Rated' if obj.get('rated') else 'Casual'} {event_kind} game"),
        ("Site", f"https://lichess.org/{obj['id']}"),
        ("Date", created.strftime("%Y.%m.%d")),
        ("White", _pgn_name(white)),
        ("Black", _pgn_name(black)),
        ("Result", result),
        ("GameId", obj["id"]),
        ("UTCDate", created.strftime("%Y.%m.%d")),
        ("UTCTime", created.strftime("%H:%M:%S")),
        ("WhiteElo", str(white.get("rating", "?"))),
        ("BlackElo", str(black.get("rating", "?"))),
    ]
    for color, side in (("White", white), ("Black", black)):
        if "ratingDiff" in side:
            tags.append((f"{color}RatingDiff", f"{side['ratingDiff']:+d}"))
        if (side.get("user") or {}).get("title"):
            tags.append((f"{color}Title", side["user"]["title"]))
    tags.append(("Variant", _VARIANT_NAMES.get(variant, variant)))
    tags.append(("TimeControl", f"{clock['initial']}+{clock['increment']}" if clock else "-"))
    opening = obj.get("opening") or {}
    tags.append(("ECO", opening.get("eco", "?")))
    if opening.get("name"):
        tags.append(("Opening", opening["name"]))
    status = obj.get("status") or ""
    tags.append(("Termination", _TERMINATION.get(status, "Normal")))
    if obj.get("initialFen"):
        tags += [("FEN", obj["initialFen"]), ("SetUp", "1")]
    head = "\n".join(f'[{k} "{_escape(v)}"]' for k, v in tags)
    analysis = obj.get("analysis") if evals else None
    return f"{head}\n\n{_movetext(obj.get('moves') or '', result, analysis)}\n"


def _escape(value: str) -> str:
    """A PGN tag value: backslash and double quote escaped."""
    return value.replace("\\", "\\\\").replace('"', '\\"')


def _movetext(moves: str, result: str, analysis: list[dict[str, Any]] | None = None) -> str:
    out: list[str] = []
    for i, san in enumerate(moves.split()):
        entry = analysis[i] if analysis and i < len(analysis) else {}
        if "eval" in entry or "mate" in entry:
            value = f"#{entry['mate']}" if "mate" in entry else f"{entry['eval'] / 100:.2f}"
            number = f"{i // 2 + 1}." if i % 2 == 0 else f"{i // 2 + 1}..."
            out.append(f"{number} {san} {{ [%eval {value}] }}")
        else:
            out.append(f"{i // 2 + 1}. {san}" if i % 2 == 0 else san)
    out.append(result)
    return " ".join(out)


def iter_pgn_games(text: str) -> Iterator[str]:
    """Split a PGN export into games (for the server's own tests)."""
    for chunk in re.split(r"\n\n(?=\[Event )", text.strip()):
        if chunk.strip():
            yield chunk.strip() + "\n"


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m tests.lichess_server [--port N] [--throttle G] [--roster N[:LINKED]]
    USER=FILE.ndjson …``: serve
    exports until interrupted (for trying ``tracker import`` by hand and for benchmarks)."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m tests.lichess_server")
    parser.add_argument("exports", nargs="*", metavar="USER=FILE",
                        help="serve FILE (NDJSON) as the games of USER")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--throttle", type=float, default=None, help="games/s per download")
    parser.add_argument("--roster", metavar="N[:LINKED]", default=None,
                        help="also serve a test club of N players, LINKED of them (default "
                        "all but 2) with a FIDE profile (tests/club_roster.py)")
    args = parser.parse_args(argv)
    server = LichessServer(throttle=args.throttle, port=args.port)
    for spec in args.exports:
        user, _, path = spec.partition("=")
        server.add_user(user, ndjson_lines(path))
    if args.roster:
        from tests.club_roster import make_roster, serve_roster

        n, _, linked = args.roster.partition(":")
        serve_roster(server, make_roster(int(n), linked=int(linked) if linked else
                                         max(int(n) - 2, 0)))
    server.start()
    print(server.url, flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        server.stop()


if __name__ == "__main__":
    main()
