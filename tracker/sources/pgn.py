"""PGN (Lichess downloads, the Lichess open database, other sites) → :class:`GameRecord`.

Real PGN files break python-chess's game splitter in ways that lose games: a missing blank line
between two games, blank lines between the tags and the moves, escaped quotes in tag values.
So the stream is cut into games here (:func:`split_games`, tracking ``{…}`` comments so that a
``[%clk …]`` never starts a game), and each game's tags are parsed with python-chess's own tag
grammar (:data:`chess.pgn.TAG_REGEX`) and unescaped. The moves are not replayed on a board: the
plies are counted with python-chess's movetext tokenizer (:data:`chess.pgn.MOVETEXT_REGEX`),
which is what the rating rules need (FIDE rates no game with fewer than 2 plies) and keeps the
import at thousands of games a second. The raw text of every game is kept.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime

import chess.pgn

from tracker.records import RESULTS, GameRecord, Side

#: Lichess ``Variant`` tag values → variant keys.
VARIANT_KEYS = {
    "standard": "standard",
    "chess960": "chess960",
    "from position": "fromPosition",
    "crazyhouse": "crazyhouse",
    "antichess": "antichess",
    "atomic": "atomic",
    "horde": "horde",
    "king of the hill": "kingOfTheHill",
    "racing kings": "racingKings",
    "three-check": "threeCheck",
    "three check": "threeCheck",
}

#: ``Termination`` tag → status key (the API's vocabulary where it has one).
TERMINATION_STATUS = {
    "normal": "normal",
    "time forfeit": "outoftime",
    "abandoned": "abandoned",
    "rules infraction": "cheat",
    "unterminated": "started",
}

_LICHESS_SITE = re.compile(r"lichess\.org/([A-Za-z0-9]{8})(?:[A-Za-z0-9]{4})?(?:[/?#]|$)")
_TOURNAMENT = re.compile(r"lichess\.org/(?:tournament|swiss)/([A-Za-z0-9]+)")
_AI_NAME = re.compile(r"^lichess AI level (\d)$", re.IGNORECASE)
_UNESCAPE = re.compile(r"\\([\"\\])")
_MOVE_NUMBER = re.compile(r"^\d+\.*$")
_COMMENTS = re.compile(r"\{[^}]*\}|;[^\n]*")
_UNKNOWN_NAMES = frozenset({"", "?", "-", "anonymous", "nn", "n.n."})


class PGNError(ValueError):
    """A PGN game that cannot become a record (the message says why, one line)."""


class StudyError(PGNError):
    """The file is a Lichess study export, which is not a game history."""


@dataclass(frozen=True, slots=True)
class PGNGame:
    """One game cut out of a PGN stream: its tags (unescaped), movetext and raw text."""

    headers: dict[str, str]
    movetext: str
    raw: str
    line: int  # 1-based line where the game starts, for messages


def _tag(line: str) -> tuple[str, str] | None:
    m = chess.pgn.TAG_REGEX.match(line)
    if m is None:
        return None
    return m.group(1), _UNESCAPE.sub(r"\1", m.group(2))


def split_games(lines: Iterable[str]) -> Iterator[PGNGame]:
    """Cut a stream of PGN lines into games, lazily.

    A new game starts at a tag line once the current game has movetext, or when a tag repeats
    (two games with no moves and no blank line between them). Tag-like lines inside ``{…}``
    comments never start a game. Blank lines anywhere are tolerated. The byte-order mark and
    ``\\r`` of CRLF files are removed.
    """
    headers: dict[str, str] = {}
    raw: list[str] = []
    moves: list[str] = []
    depth = 0  # {…} comment nesting carried across lines
    start = 1
    for lineno, line in enumerate(lines, 1):
        line = line.rstrip("\r\n").lstrip("\ufeff")
        stripped = line.strip()
        if depth == 0 and stripped.startswith("["):
            tag = _tag(stripped)
            if tag is not None:
                if moves or tag[0] in headers:
                    yield PGNGame(headers, "\n".join(moves), "\n".join(raw).strip() + "\n", start)
                    headers, raw, moves = {}, [], []
                if not headers and not raw:
                    start = lineno
                headers[tag[0]] = tag[1]
                raw.append(stripped)
                continue
        if stripped.startswith("%") and depth == 0:
            continue  # escape mechanism: the rest of the line is ignored (PGN spec 6)
        if stripped:
            if not headers and not raw:
                start = lineno
            moves.append(stripped)
            raw.append(stripped if depth == 0 else line)
            depth += stripped.count("{") - stripped.count("}")
            depth = max(depth, 0)
        elif raw and moves:
            raw.append("")
    if headers or moves:
        yield PGNGame(headers, "\n".join(moves), "\n".join(raw).strip() + "\n", start)


def count_plies(movetext: str) -> int:
    """Half-moves in the main line, with python-chess's tokenizer.

    Comments, NAGs, move numbers, the result and side variations ``( … )`` are not moves.
    """
    plies = 0
    depth = 0
    if "{" in movetext or ";" in movetext:
        movetext = _COMMENTS.sub(" ", movetext)
    for match in chess.pgn.MOVETEXT_REGEX.finditer(movetext):
        token = match.group(0)
        first = token[0]
        if first == "{" or first == ";" or first == "$" or first == "?" or first == "!":
            continue
        if first == "(":
            depth += 1
        elif first == ")":
            depth = max(depth - 1, 0)
        elif depth == 0 and token not in ("1-0", "0-1", "1/2-1/2", "*", "--") and not (
            _MOVE_NUMBER.match(token)
        ):
            plies += 1
    return plies


def _rating(value: str | None) -> int | None:
    """Elo tag → int; ``?``, ``-``, empty and nonsense → ``None`` (never 0 or 1500)."""
    if value is None:
        return None
    value = value.strip()
    if value.isdigit():
        return int(value) or None
    return None


def _diff(value: str | None) -> int | None:
    if not value:
        return None
    try:
        return int(value.strip().lstrip("+"))
    except ValueError:
        return None


def _side(h: dict[str, str], color: str) -> Side:
    name = (h.get(color) or "").strip()
    rating = _rating(h.get(f"{color}Elo"))
    ai = _AI_NAME.match(name)
    if ai:
        return Side(name=name, ai_level=int(ai.group(1)))
    user_id = None if name.lower() in _UNKNOWN_NAMES else name.lower()
    return Side(
        user_id=user_id,
        name=name if user_id else (name or None),
        title=(h.get(f"{color}Title") or "").strip() or None,
        rating=rating,
        rating_diff=_diff(h.get(f"{color}RatingDiff")),
    )


def _datetime(h: dict[str, str]) -> datetime:
    date = h.get("UTCDate") or h.get("Date") or ""
    time_ = h.get("UTCTime") or "00:00:00"
    parts = date.replace("-", ".").replace("/", ".").split(".")
    if len(parts) != 3 or not parts[0].isdigit():
        raise PGNError(f"no usable date ({date or 'no Date tag'})")
    year = int(parts[0])
    month = int(parts[1]) if parts[1].isdigit() else 1
    day = int(parts[2]) if parts[2].isdigit() else 1
    try:
        hh, mm, ss = (int(x) for x in time_.split(":"))
    except ValueError:
        hh = mm = ss = 0
    try:
        return datetime(year, month, day, hh, mm, ss, tzinfo=UTC)
    except ValueError as exc:
        raise PGNError(f"bad date {date} {time_}: {exc}") from None


def speed_from_clock(initial: int | None, increment: int | None) -> str:
    """Lichess speed from a clock: initial + 40 × increment seconds; no clock → correspondence."""
    if initial is None:
        return "correspondence"
    est = initial + 40 * (increment or 0)
    if est < 30:
        return "ultraBullet"
    if est < 180:
        return "bullet"
    if est < 480:
        return "blitz"
    if est < 1500:
        return "rapid"
    return "classical"


def _clock(tc: str | None) -> tuple[int | None, int | None]:
    if not tc or tc in ("-", "?"):
        return None, None
    base, _, inc = tc.partition("+")
    try:
        return int(base), int(inc or 0)
    except ValueError:
        return None, None


def _rated(h: dict[str, str]) -> bool | None:
    event = (h.get("Event") or "").strip().lower()
    if "WhiteRatingDiff" in h or "BlackRatingDiff" in h or event.startswith("rated"):
        return True
    if event.startswith("casual"):
        return False
    return None  # old exports and tournament names: unknown, not counted (said so)


def content_id(game: PGNGame) -> str:
    """A stable id for a game without a Lichess ``Site``: a digest of its tags and moves.

    The same game imported twice gets the same id, so a re-import never duplicates it.
    """
    keys = ("Event", "Site", "Date", "Round", "White", "Black", "Result", "UTCDate", "UTCTime")
    basis = "\x1f".join(game.headers.get(k, "") for k in keys) + "\x1e" + " ".join(
        game.movetext.split()
    )
    return "pgn-" + hashlib.blake2b(basis.encode("utf-8"), digest_size=6).hexdigest()


def game_id(game: PGNGame) -> str:
    """The Lichess id (``GameId`` tag or the ``Site`` URL), else :func:`content_id`."""
    gid = game.headers.get("GameId", "").strip()
    if len(gid) == 8 and gid.isalnum():
        return gid
    m = _LICHESS_SITE.search(game.headers.get("Site", ""))
    if m:
        return m.group(1)
    return content_id(game)


def record_from_pgn(game: PGNGame) -> GameRecord:
    """One cut-out PGN game → :class:`GameRecord`. Raises PGNError (one-line reason)."""
    h = game.headers
    if not h:
        raise PGNError("moves without tags")
    if "/study/" in h.get("Site", "") or "StudyName" in h or "ChapterName" in h:
        raise StudyError("this is a Lichess study export, not a game history")
    created = _datetime(h)
    result = h.get("Result", "*").strip()
    variant_tag = (h.get("Variant") or "Standard").strip().lower()
    variant = VARIANT_KEYS.get(variant_tag, variant_tag.replace(" ", ""))
    fen = h.get("FEN")
    if variant == "standard" and (fen or h.get("SetUp") == "1"):
        variant = "fromPosition"
    initial, increment = _clock(h.get("TimeControl"))
    speed = speed_from_clock(initial, increment)
    perf = speed if variant in ("standard", "fromPosition") else variant
    tour = _TOURNAMENT.search(h.get("Event", "") + " " + h.get("Site", ""))
    termination = (h.get("Termination") or "").strip().lower()
    return GameRecord(
        id=game_id(game),
        source="pgn",
        created_at=created,
        last_move_at=None,
        rated=_rated(h),
        variant=variant,
        speed=speed,
        perf=perf,
        status=TERMINATION_STATUS.get(termination, termination or None),
        result=result if result in RESULTS else None,
        plies=count_plies(game.movetext),
        clock_initial=initial,
        clock_increment=increment,
        initial_fen=fen,
        eco=(h.get("ECO") or "").strip() if h.get("ECO", "?") != "?" else None,
        opening_name=(h.get("Opening") or "").strip() if h.get("Opening", "?") != "?" else None,
        tournament_id=tour.group(1) if tour else None,
        white=_side(h, "White"),
        black=_side(h, "Black"),
        raw=game.raw,
    )


def read_pgn(lines: Iterable[str], *, errors: list[str] | None = None) -> Iterator[GameRecord]:
    """Parse PGN lines lazily into records.

    A game that cannot be read is skipped and described in ``errors`` (``"game at line N:
    reason"``) when a list is given. A study export raises StudyError at its first chapter.
    """
    for game in split_games(lines):
        try:
            yield record_from_pgn(game)
        except StudyError:
            raise
        except PGNError as exc:
            if errors is not None:
                errors.append(f"game at line {game.line}: {exc}")
