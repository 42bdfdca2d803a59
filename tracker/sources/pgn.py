"""PGN (Lichess downloads, the Lichess open database, other sites) → :class:`GameRecord`.

Real PGN files break python-chess's game splitter in ways that lose games: a missing blank line
between two games, blank lines between the tags and the moves, escaped quotes in tag values.
So the stream is cut into games here (:func:`scan_games`, tracking ``{…}`` comments so that a
``[%clk …]`` never starts a game), on raw bytes, and each game's tags are read as
python-chess's tag grammar reads them (``chess.pgn.TAG_REGEX``: a name, whitespace, a quoted
value) and unescaped (``\\"`` → ``"``, ``\\\\`` → ``\\``; python-chess keeps the escapes). The
moves are not replayed on a board: the plies of the main line are counted as python-chess's
movetext tokenizer (``chess.pgn.MOVETEXT_REGEX``) finds them, which is what the rating rules
need (FIDE rates no game with fewer than 2 plies) and keeps the import at thousands of games a
second. The tests pin both against python-chess.

A file is read in blocks of whole lines (:func:`scan_blocks`): a game laid out as Lichess
exports it (usual tag lines, one movetext line) is cut and read with a few regex calls, and
counted by its separators when its movetext is plain; any other game goes line by line
through :func:`scan_games`' cutter, so both give the same games (tested on random files).

Filtering a huge file for a few players (the Lichess open database, tens of GB a month) reads
only the ``White``/``Black`` tag lines of the games it drops: their movetext is skipped without
being decoded or tokenized, and nothing of them is kept. Whole chunks are searched for the
names (:func:`filter_chunks`); a run of games without them is counted, not cut into lines
(games, lines and the layout check in one numpy pass once a dump is past 128 MB), and
:func:`read_pgn` counts such a run at once.

A game is decoded as UTF-8; a game that is not (an old Windows export) is read line by line as
cp1252/latin-1 and marked repaired. The raw text of every game is kept.
"""

from __future__ import annotations

import codecs
import hashlib
import io
import re
from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import chain
from typing import Final, cast

from tracker.core.records import DRAW, RESULTS, GameRecord, Side, invalid_value, unstorable_text
from tracker.sources.files import (
    REPAIRED_ENCODING,
    SKIP_CUT_GAME,
    SKIP_INVALID,
    SKIP_NOT_A_GAME,
    SKIP_NOT_PLAYER,
    SKIP_STUDY,
    SKIP_TOO_LARGE,
    SKIP_UNREADABLE,
    ReadLog,
    decode_fallback,
)
from tracker.sources.limits import (
    MAX_PGN_GAME_BYTES,
    OversizedLine,
    last_brace,
    lines_of_blocks,
)
from tracker.sources.pgn_evals import pgn_analysis

#: Lichess ``Variant`` tag values (lowercase) → variant keys.
VARIANT_KEYS = {
    "standard": "standard",
    "chess960": "chess960",
    "from position": "fromPosition",
    "fromposition": "fromPosition",
    "crazyhouse": "crazyhouse",
    "antichess": "antichess",
    "atomic": "atomic",
    "horde": "horde",
    "king of the hill": "kingOfTheHill",
    "kingofthehill": "kingOfTheHill",
    "racing kings": "racingKings",
    "racingkings": "racingKings",
    "three-check": "threeCheck",
    "three check": "threeCheck",
    "threecheck": "threeCheck",
}

#: ``Termination`` tag → status key (the API's vocabulary where it has one).
TERMINATION_STATUS = {
    "normal": "normal",
    "time forfeit": "outoftime",
    "abandoned": "abandoned",
    "rules infraction": "cheat",
    "unterminated": "started",
}

#: Speed words of a Lichess ``Event`` ("Rated Blitz game", "rated bullet game", "Daily Blitz
#: Arena"), used when a game has no usable ``TimeControl``. Longest word first.
_EVENT_SPEEDS = (
    ("ultrabullet", "ultraBullet"),
    ("bullet", "bullet"),
    ("blitz", "blitz"),
    ("rapid", "rapid"),
    ("classical", "classical"),
    ("correspondence", "correspondence"),
    ("daily", "correspondence"),
)

#: Tag names as Lichess spells them, to read a file that spells them in another case.
_CANONICAL_TAGS = {
    name.lower(): name
    for name in (
        "Event", "Site", "Date", "Round", "White", "Black", "Result", "UTCDate", "UTCTime",
        "WhiteElo", "BlackElo", "WhiteRatingDiff", "BlackRatingDiff", "WhiteTitle",
        "BlackTitle", "Variant", "TimeControl", "ECO", "Opening", "Termination", "GameId",
        "FEN", "SetUp", "StudyName", "ChapterName",
    )
}

_TAG_SPELLINGS = frozenset(_CANONICAL_TAGS.values())

_LICHESS_SITE = re.compile(r"lichess\.org/([A-Za-z0-9]{8})(?:[A-Za-z0-9]{4})?(?:[/?#]|$)")
_TOURNAMENT = re.compile(r"lichess\.org/(?:tournament|swiss)/([A-Za-z0-9]+)")
#: The Lichess AI as PGN names it (``lichess AI level 3``).
_AI_NAME = re.compile(r"^lichess AI level (\d)$", re.IGNORECASE)
_UNESCAPE = re.compile(r"\\([\"\\])")
_COMMENTS = re.compile(r"\{[^}]*\}|;[^\n]*")
#: The moves of python-chess's MOVETEXT_REGEX (its first group) without the null move "--".
_SAN = re.compile(
    r"[NBKRQ]?[a-h]?[1-8]?[\-x]?[a-h][1-8](?:=?[nbrqkNBRQK])?|[PNBRQK]?@[a-h][1-8]"
    r"|Z0|0000|@@@@|O-O(?:-O)?|0-0(?:-0)?"
)
#: One move as Lichess writes it (a piece move, a pawn move or capture with its promotion, a
#: castling, then check or mate): a token :data:`_SAN` finds exactly once, from its first
#: character to its square (or promotion); nothing else of it starts another move.
_PLAIN_MOVE = (r"(?:[NBKRQ][a-h]?[1-8]?x?[a-h][1-8]|[a-h](?:x[a-h])?[1-8](?:=[NBRQ])?"
               r"|O-O(?:-O)?)[+#]?")
#: Movetext as Lichess exports it: ``1. e4 e5 2. Nf3 … 1-0``, single spaces (or line breaks),
#: no comment, variation, NAG or black move number. In such text the moves are the tokens
#: that are not a move number (one ``.`` each) or the result: spaces and breaks − dots.
_PLAIN_MOVETEXT = re.compile(
    rf"(?:\d+\.[ \n]{_PLAIN_MOVE}(?:[ \n]{_PLAIN_MOVE})?[ \n])*+(?:1-0|0-1|1/2-1/2|\*)"
)
#: Tag names python-chess accepts (``TAG_REGEX``'s first group), for names that are not plain
#: letters and digits.
_TAG_NAME = re.compile(rb"[A-Za-z0-9][A-Za-z0-9_+#=:-]*")
#: The start of a tag line (``[Name "``), all a line over the cap shows of itself.
_TAG_START = re.compile(rb'\s*\[([A-Za-z0-9][A-Za-z0-9_+#=:-]*)\s+"')
#: Any other line over the cap that starts with ``[`` (a 5 MB tag name, a tag without its
#: quote): movetext never does outside a comment, so it is a tag too, named by what it shows.
_BRACKET_START = re.compile(rb'\s*\[([^\s"\]]*)')
_UNKNOWN_NAMES = frozenset({"", "?", "-", "anonymous", "nn", "n.n.", "n.n"})
_BOM = codecs.BOM_UTF8
_RESULT_TOKENS = {"1-0": "1-0", "0-1": "0-1", "1/2-1/2": DRAW, "½-½": DRAW, "1/2": DRAW}

#: ``progress(games_seen)`` is called every this many games, kept or dropped.
PROGRESS_EVERY = 1000


class PGNError(ValueError):
    """A PGN game that cannot become a record (the message says why, one line)."""


class StudyError(PGNError):
    """A Lichess study chapter, which is not a game between two players."""


@dataclass(frozen=True, slots=True)
class PGNGame:
    """One game cut out of a PGN stream: its tags (unescaped), movetext and raw text.

    ``repaired`` is True when the game was not UTF-8 and was read as cp1252/latin-1.
    """

    headers: dict[str, str]
    movetext: str
    raw: str
    line: int  # 1-based line where the game starts, for messages
    repaired: bool = False


def _decode(raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return decode_fallback(raw)


def _build(raw: list[bytes], n_tags: int, moves: list[bytes], start: int) -> PGNGame:
    """A kept game's lines (its ``n_tags`` tag lines first) → :class:`PGNGame`."""
    try:
        text = b"\n".join(raw).decode("utf-8")
        movetext = b"\n".join(moves).decode("utf-8")
        repaired = False
    except UnicodeDecodeError:
        # decoded line by line: one cp1252 line must not garble the others
        text = "\n".join(_decode(x) for x in raw)
        movetext = "\n".join(_decode(x) for x in moves)
        repaired = True
    headers: dict[str, str] = {}
    for line in text.split("\n", n_tags)[:n_tags]:
        # the splitter checked the form: "[", name, whitespace, '"', value, '"]'
        q = line.find('"')
        name = line[1:q].rstrip()
        value = line[q + 1 : -2]
        if "\\" in value:
            value = _UNESCAPE.sub(r"\1", value)
        if name not in _TAG_SPELLINGS:
            name = _CANONICAL_TAGS.get(name.lower(), name)
        headers[name] = value
    return PGNGame(headers, movetext, text.strip() + "\n", start, repaired)


def _as_bytes(lines: Iterable[bytes] | Iterable[str] | Iterable[bytes | Dropped]
              ) -> Iterator[bytes | Dropped]:
    it: Iterator[bytes | str | Dropped] = iter(lines)
    for first in it:
        if isinstance(first, str):
            return (x.encode("utf-8") if isinstance(x, str) else x for x in chain([first], it))
        return cast("Iterator[bytes | Dropped]", chain([first], it))
    return iter(())


def _player_key(value: bytes | None) -> bytes:
    if value is None:
        return b""
    value = value.strip().lower()
    if b"\\" in value:
        value = value.replace(b'\\"', b'"').replace(b"\\\\", b"\\")
    return value


#: Games (and lines) a chunk filter dropped without cutting them into lines: ``(games, lines)``.
Dropped = tuple[int, int]

#: A game starts after a blank line, at a tag: where blocks are cut.
_GAME_BREAK = b"\n\n["


def _plain_games(buf: bytes, start: int, end: int) -> int:
    """The number of games in ``buf[start:end]`` (whole games, cut at game starts) when they
    are laid out as the Lichess dumps are: each game starts with an ``[Event`` line after a
    blank line, and every blank line followed by a tag is such a start. ``-1`` for any other
    layout (the caller then scans it line by line). The caller has checked that the buffer
    holds no CR and no byte-order mark.

    Two byte counts, each one C pass: for such a run, :func:`scan_games` finds one game per
    ``[Event`` line.
    """
    if not buf.startswith(b"[Event ", start):
        return -1
    games = buf.count(b"\n[Event ", start, end) + 1
    return games if buf.count(_GAME_BREAK, start, end) + 1 == games else -1


#: ``[Event `` as byte values, ``E`` first (the byte that rules out most positions).
_EVENT_LINE: Final = tuple((k, b"[Event "[k]) for k in (1, 0, 2, 3, 4, 5, 6))
_NEWLINE, _BRACKET = 10, 91
#: Bytes of a dump filtered by byte passes before :func:`_plain_run` takes numpy (whose
#: import, ~0.1 s of CPU, pays for itself after ~120 MB: ~3.5 ms saved per 4 MB chunk).
VECTOR_AFTER_BYTES: Final = 128 << 20


def _plain_run(buf: bytes, start: int, end: int, vectorised: bool = True) -> Dropped | None:
    """``(games, lines)`` of ``buf[start:end]`` when :func:`_plain_games` finds its games in
    the dumps' layout (the same count, the same answer), else ``None``.

    A dump's bytes go through here nearly all. Without ``vectorised``: :func:`_plain_games`
    and a count of newlines, three byte passes. With it, one: numpy finds the newlines, and
    ``\n[Event `` and ``\n\n[`` are checked at those positions only (a dump has a newline
    every ~40 bytes). A run with more than one newline in 8 bytes is no dump: it is counted by
    the byte passes, which keeps the positions' array no larger than the run.
    """
    if not buf.startswith(b"[Event ", start):
        return None
    if not vectorised:
        games = _plain_games(buf, start, end)
        return None if games < 0 else (games, buf.count(b"\n", start, end))
    import numpy as np

    n = end - start
    a = np.frombuffer(buf, np.uint8, n, start)
    newline = a == _NEWLINE
    lines = int(np.count_nonzero(newline))
    if lines > n >> 3:
        games = _plain_games(buf, start, end)
        return None if games < 0 else (games, lines)
    at = np.flatnonzero(newline)
    q = at[at + 2 < n]
    breaks = int(np.count_nonzero((a[q + 1] == _NEWLINE) & (a[q + 2] == _BRACKET)))
    r = at[at + 8 <= n]
    for k, byte in _EVENT_LINE:
        r = r[a[r + 1 + k] == byte]
    return (len(r) + 1, lines) if breaks == len(r) else None


def _lines_of(buf: bytes, start: int, end: int) -> list[bytes]:
    parts = buf[start:end].split(b"\n")
    if parts and not parts[-1]:
        parts.pop()
    return parts


def _filter_block(buf: bytes, end: int, names: list[bytes], vectorised: bool = False
                  ) -> Iterator[bytes | Dropped]:
    """``buf[:end]`` (whole games) as lines for the scanner, except runs of games that hold
    none of ``names`` anywhere (any case) and have the dumps' plain layout: those become
    ``(games, lines)`` (counted as :func:`_plain_run` with ``vectorised`` counts)."""
    low = buf.lower()
    plain = b"\r" not in buf and not (b"\xef" in buf and _BOM in buf)
    pos = 0
    while pos < end:
        hits = [i for i in (low.find(n, pos, end) for n in names) if i >= 0]
        if not hits:
            start = stop = end
        else:
            hit = min(hits)
            start = buf.rfind(_GAME_BREAK, pos, hit)
            start = pos if start < 0 else start + 2
            stop = buf.find(_GAME_BREAK, hit, end)
            stop = end if stop < 0 else stop + 2
        if start > pos:  # games without the names: dropped whole when plain
            run = _plain_run(buf, pos, start, vectorised) if plain else None
            if run is not None:
                yield run
            else:
                yield from _lines_of(buf, pos, start)
        if stop > start:  # the game with a name in it, and any it could not be told from
            yield from _lines_of(buf, start, stop)
        pos = stop


def filter_chunks(chunks: Iterable[bytes], players: Collection[str],
                  carry_limit: int = 1 << 26, vector_after: int = VECTOR_AFTER_BYTES
                  ) -> Iterator[bytes | Dropped]:
    """Lines of a PGN byte stream for :func:`scan_games` with ``players``, cut from big chunks.

    A dump holds a wanted game in thousands: walking its lines one by one in Python is what a
    filter costs. Here each chunk is cut after its last blank line before a tag (a game start),
    searched for the wanted names (any case), and every run of games without them is handed on
    as one ``(games, lines)`` count when its layout is the dumps' plain one
    (:func:`_plain_run`: byte passes, numpy once ``vector_after`` bytes have gone by);
    everything else goes on as lines, so what is stored and counted is what the line scanner
    gives. Names with ``"`` or ``\\`` (escaped in tags) turn the shortcut off.
    """
    names = [p.strip().lower().encode("utf-8") for p in players]
    if not names or any(not n or b'"' in n or b"\\" in n for n in names):
        carry = b""
        for chunk in chunks:
            *whole, carry = (carry + chunk).split(b"\n")
            yield from whole
        if carry:
            yield carry
        return
    carry = b""
    seen = 0
    for chunk in chunks:
        buf = carry + chunk if carry else chunk
        seen += len(chunk)
        cut = buf.rfind(_GAME_BREAK)
        if cut < 0:
            if len(buf) > carry_limit:  # no game start in sight: pass whole lines on
                cut = buf.rfind(b"\n")
                yield from _lines_of(buf, 0, cut + 1)
                buf = buf[cut + 1 :]
            carry = buf
            continue
        yield from _filter_block(buf, cut + 2, names, seen > vector_after)
        carry = buf[cut + 2 :]
    if carry:
        yield from _lines_of(carry, 0, len(carry))


@dataclass(frozen=True, slots=True)
class GameTooLarge:
    """A game over the size cap (:data:`~tracker.sources.limits.MAX_PGN_GAME_BYTES`): only its
    start line and size are known; its text streamed by and was not kept."""

    line: int
    size: int


@dataclass(frozen=True, slots=True)
class NotAGame:
    """Text after a game's termination marker that is no game (up to the next tag line)."""

    line: int
    text: str


#: A movetext line ending with a game termination marker (PGN spec 8.2.6) ends the game.
_ENDS_GAME = (b" 1-0", b" 0-1", b" 1/2-1/2", b" *", b"}1-0", b"}0-1", b"}1/2-1/2", b"}*")
_TERMINATIONS = frozenset({b"1-0", b"0-1", b"1/2-1/2", b"*"})


def _ends_game(s: bytes) -> bool:
    return s in _TERMINATIONS or s.endswith(_ENDS_GAME)


#: The bytes lines are told apart by (a line is bytes: ``s[0]`` is an int).
_OPEN_BRACKET: Final = ord("[")  # a tag line starts with it
_PERCENT: Final = ord("%")  # an escape line: ignored (PGN spec 6)
_SPACE: Final = ord(" ")
_BOM_FIRST: Final = _BOM[0]  # a byte-order mark's first byte


def _tag_name(s: bytes) -> bytes:
    """The name of a tag line as python-chess's ``TAG_REGEX`` reads one (``[``, a name,
    whitespace, a quoted value, ``]``); ``b""`` when ``s`` is no tag line. String methods,
    not a regex (:meth:`_GameCutter.bracket` checks the usual ``[Name "`` form first)."""
    if not s.endswith(b'"]'):  # the caller checked the "["
        return b""
    q = s.find(b'"')
    name = s[1 : q - 1]
    if not (s[q - 1] == _SPACE and name.isalnum()):  # not the usual '[Name "'
        name = s[1:q].rstrip()
        if not (0 < len(name) < q - 1 and (name.isalnum() or _TAG_NAME.fullmatch(name))):
            return b""
    return name if q < len(s) - 2 else b""


_Out = tuple["PGNGame | GameTooLarge | NotAGame | None", ...]


class _GameCutter:
    """The games of a stream of PGN lines, as :func:`scan_games` cuts them.

    One method per kind of line; each returns what the line completes (a game, ``None`` for
    a game of nobody wanted, :class:`GameTooLarge`, :class:`NotAGame`), mostly nothing.
    Player filtering is :meth:`_player_tag` and :meth:`_start_moves`: a game of others is
    decided from its ``White``/``Black`` tag lines and nothing more of it is kept.
    """

    __slots__ = ("black", "cap", "ended", "has_moves", "in_comment", "junk", "junk_text",
                 "keep", "moves", "names", "raw", "size", "start", "wanted", "white")

    def __init__(self, players: Collection[str] | None, cap: int) -> None:
        self.wanted = {p.strip().lower().encode("utf-8") for p in players} if players else None
        self.cap = cap
        self.start = 0  # line where the current game starts
        self.in_comment = False  # inside a {…} comment that goes on to the next line
        self.junk = 0  # line where text that is no game started (0: none)
        self.junk_text = b""
        self._new_game()

    def _new_game(self) -> None:
        self.raw: list[bytes] = []  # its lines: tags, then moves (not for dropped games)
        self.names: set[bytes] = set()  # its tag names
        self.moves: list[bytes] = []
        self.has_moves = False
        self.keep = True  # False once a filtered game is known to be of nobody wanted
        self.white: bytes | None = None
        self.black: bytes | None = None
        self.size = 0  # its bytes so far
        self.ended = False  # its movetext has its termination marker

    def _game(self) -> PGNGame | GameTooLarge | None:
        if not self.keep:
            return None
        if self.size > self.cap:
            return GameTooLarge(self.start, self.size)
        return _build(self.raw, len(self.names), self.moves, self.start)

    def _finish(self) -> _Out:
        out = (self._game(),)
        self._new_game()
        return out

    def _junk_starts(self, text: bytes, lineno: int) -> _Out:
        """Text after the game's end that is no game, up to the next tag line."""
        out = self._finish()
        self.junk, self.junk_text = lineno, text[:60]
        return out

    def _is_wanted(self) -> bool:
        assert self.wanted is not None
        return _player_key(self.white) in self.wanted or _player_key(self.black) in self.wanted

    def close_before(self, name: bytes) -> _Out | None:
        """What a tag line ``[name "…"]`` completes when it starts a new game (so that the
        game can be cut elsewhere, :func:`scan_blocks`); ``None``, changing nothing, when it
        would not: inside a comment, or a tag of a game that has tags and no moves yet."""
        if self.in_comment:
            return None
        if self.junk:
            out = (NotAGame(self.junk, _decode(self.junk_text)),)
            self.junk = 0
            return out
        if self.has_moves or name in self.names:
            return self._finish()
        return None if self.names else ()

    def blank(self) -> None:
        """A blank line: kept in the movetext (as it was), never a game's end."""
        if self.has_moves and self.keep and self.size <= self.cap:
            self.raw.append(b"")

    @staticmethod
    def dropped(games: int) -> _Out:
        """Games a chunk filter dropped."""
        return (None,) * games

    def bracket(self, s: bytes, line: bytes, lineno: int) -> _Out:
        """A line that starts with ``[``: a tag line (its name read as :func:`_tag_name`
        reads it, the usual ``[Name "`` checked here first), the next game's first when this
        one has moves or the tag already; else movetext (and inside a comment, always)."""
        q = s.find(b'"')
        name = s[1 : q - 1]
        if not (s[q - 1] == _SPACE and name.isalnum() and q < len(s) - 2
                and s.endswith(b'"]')):
            name = _tag_name(s)  # another form python-chess reads, or no tag
        if not name or self.in_comment:
            return self.text(s, line, lineno)
        out = self._tag_starts(name, lineno)
        self.size = size = self.size + len(s)
        if size <= self.cap and self.keep:
            self.raw.append(s)
        if len(name) == 5:
            self._player_tag(name.lower(), s)
        return out

    def _player_tag(self, low: bytes, s: bytes) -> None:
        if low == b"white":
            self.white = s[s.find(b'"') + 1 : -2]
        elif low == b"black":
            self.black = s[s.find(b'"') + 1 : -2]
        else:
            return
        if self.wanted is not None and self.white is not None and self.black is not None:
            # both players known: a game of others is dropped right here, and its other
            # lines are no longer kept
            self.keep = self._is_wanted()

    def escape(self, s: bytes, line: bytes, lineno: int) -> _Out:
        """A ``%`` line: ignored, unless inside a comment."""
        return self.text(s, line, lineno) if self.in_comment else ()

    def text(self, s: bytes, line: bytes, lineno: int) -> _Out:
        """A line of movetext, of a comment, or text after the game's end (no game)."""
        if not self.in_comment:
            if self.junk:
                return ()
            if self.ended and s[0] != _OPEN_BRACKET:
                # a "[" line that is no tag stays movetext, as python-chess reads it
                return self._junk_starts(s, lineno)
        if not self.has_moves:
            self._start_moves(lineno)
        if self.keep:
            self._hold(s, line)
        self._track_comment(s)
        return ()

    def _start_moves(self, lineno: int) -> None:
        self.has_moves = True
        if not self.names:
            self.start = lineno
        if self.wanted is not None:
            self.keep = self._is_wanted()

    def _hold(self, s: bytes, line: bytes) -> None:
        self.size += len(line)
        if self.size <= self.cap:
            self.moves.append(s)
            self.raw.append(line.rstrip(b"\r\n") if self.in_comment else s)
        elif self.raw:
            self.raw, self.moves = [], []  # over the cap: nothing more of it is held

    def _track_comment(self, s: bytes) -> None:
        # Brace comments do not nest (PGN spec 5): the line ends inside one iff its last
        # brace opens one. rfind is a memrchr: long movetext lines with a clock comment per
        # move cost next to nothing.
        o = s.rfind(b"{")
        if o >= 0:
            self.in_comment = o > s.rfind(b"}")
        elif self.in_comment and b"}" in s:
            self.in_comment = False
        if not self.in_comment and _ends_game(s):
            self.ended = True

    def big(self, line: bytes, lineno: int) -> _Out:
        """A line over the cap: not looked into past its start; the game it is in is too
        large. A line that starts as a tag line does (``[Name "``, outside a comment) is a
        tag of that game, as :meth:`bracket` takes one (a 5 MB ``[Event "…"]`` before the
        game's other tags and moves): the whole game is one game too large, nothing of it
        read as another game. So is one that starts with ``[`` in any other way (a 5 MB tag
        name): movetext never does outside a comment. Any other is movetext (or text after a
        game's end)."""
        m = None if self.in_comment else (_TAG_START.match(line, 0, 256)
                                          or _BRACKET_START.match(line, 0, 256))
        if m is not None:
            out = self._tag_starts(m.group(1), lineno)
        elif self.junk:
            return ()
        elif self.ended:
            return self._junk_starts(bytes(line[:60]), lineno)
        else:
            out = ()
            if not self.has_moves:
                self._start_moves(lineno)
            # whether a comment goes on after it: the line's last brace, kept when it was cut
            brace = getattr(line, "brace", None)
            brace = last_brace(line) if brace is None else brace
            if brace:
                self.in_comment = brace == b"{"
        self.size += getattr(line, "size", len(line))
        self.raw, self.moves = [], []
        return out

    def _tag_starts(self, name: bytes, lineno: int) -> _Out:
        """A tag line ``name`` begins (the next game's first when this one has moves or the
        tag already): what it completes. For :meth:`bracket` and for a tag line over the size
        cap."""
        out: _Out = ()
        if self.junk:
            out = (NotAGame(self.junk, _decode(self.junk_text)),)
            self.junk = 0
        elif self.has_moves or name in self.names:
            out = self._finish()
        if not self.names:
            self.start = lineno
        self.names.add(name)
        return out

    def end(self) -> _Out:
        """What the end of the stream completes."""
        if self.junk:
            return (NotAGame(self.junk, _decode(self.junk_text)),)
        if not (self.names or self.has_moves):
            return ()
        if not self.has_moves and self.wanted is not None:
            self.keep = self._is_wanted()
        return (self._game(),)


def scan_games(
    lines: Iterable[bytes] | Iterable[str] | Iterable[bytes | Dropped],
    players: Collection[str] | None = None,
    max_game_bytes: int = MAX_PGN_GAME_BYTES,
) -> Iterator[PGNGame | GameTooLarge | NotAGame | None]:
    """Cut a stream of PGN lines into games, lazily; with ``players``, drop other games early.

    A new game starts at a tag line once the current game has movetext, or when a tag repeats
    (two games with no moves and no blank line between them). Tag-like lines inside ``{…}``
    comments (which do not nest) never start a game. Blank lines anywhere are tolerated;
    byte-order marks and the ``\\r`` of CRLF files are removed; a ``%`` line is ignored.
    A movetext line ending with a termination marker (``1-0``, ``0-1``, ``1/2-1/2``, ``*``)
    ends the game: text after it, up to the next tag line, is no game (:class:`NotAGame`).

    ``players``: names (any case). A game where neither ``White`` nor ``Black`` is one of them
    is decided from those two tag lines alone: its movetext is skipped, not decoded, and the
    game yields ``None`` (so that a caller can count it and show progress). ``lines`` may hold
    ``(games, lines)`` counts of games already dropped (:func:`filter_chunks`): each yields
    ``None`` too. A game of more than ``max_game_bytes`` is not held: it yields
    :class:`GameTooLarge`.

    Each line is told apart here (blank, tag, escape, movetext, over the cap) and handed to
    :class:`_GameCutter`, which cuts games and filters players, one method per kind of line.
    """
    for item in _scan_counted(lines, players, max_game_bytes):
        if isinstance(item, int):
            yield from _GameCutter.dropped(item)
        else:
            yield item


def _scan_counted(
    lines: Iterable[bytes] | Iterable[str] | Iterable[bytes | Dropped],
    players: Collection[str] | None, max_game_bytes: int,
) -> Iterator[PGNGame | GameTooLarge | NotAGame | int | None]:
    """:func:`scan_games`, but a run of games a chunk filter dropped yields their number (an
    ``int``) once instead of a ``None`` each: a dump's games go by in thousands a chunk."""
    cut = _GameCutter(players, max_game_bytes)
    yield from _cut_lines(cut, _as_bytes(lines))
    yield from cut.end()


def _cut_lines(cut: _GameCutter, lines: Iterable[bytes | Dropped], lineno: int = 0
               ) -> Iterator[PGNGame | GameTooLarge | NotAGame | int | None]:
    """Hand ``lines`` (the first is line ``lineno + 1``) to ``cut``; what they complete (a
    count of games a chunk filter dropped as an ``int``)."""
    bracket, text = cut.bracket, cut.text  # the lines of nearly every game
    max_game_bytes = cut.cap
    for line in lines:
        if isinstance(line, tuple):  # games dropped by filter_chunks: (games, lines)
            lineno += line[1]
            if line[0]:
                yield line[0]
            continue
        lineno += 1
        # What the line is: told apart here, with string methods (this runs on every line of
        # a dump); what it means for the game is the cutter's.
        if line.__class__ is OversizedLine or len(line) > max_game_bytes:
            out = cut.big(line, lineno)
        else:
            s = line.strip()
            if not s:
                cut.blank()
                continue
            first = s[0]
            if first == _BOM_FIRST and s.startswith(_BOM):
                s = s[3:].strip()
                if not s:  # a byte-order mark alone
                    continue
                first = s[0]
            if first == _OPEN_BRACKET:
                out = bracket(s, line, lineno)
            elif first == _PERCENT:
                out = cut.escape(s, line, lineno)
            else:
                out = text(s, line, lineno)
        if out:
            yield from out


def _lines_cut(cut: _GameCutter, lines: Iterable[bytes], lineno: int
               ) -> Iterator[PGNGame | GameTooLarge | NotAGame | None]:
    """:func:`_cut_lines` of byte lines only (no counts of dropped games among them)."""
    return cast("Iterator[PGNGame | GameTooLarge | NotAGame | None]",
                _cut_lines(cut, lines, lineno))


#: A game as Lichess exports it, cut and read by :func:`scan_blocks` without a step per line:
#: tag lines in the usual form (``[Name "value"]``, the value without ``"`` or ``\\``, so
#: nothing to unescape), one blank line, one movetext line (no space around it, not starting
#: like a tag, an escape or a byte-order mark), then blank lines and the next game's first
#: tag line in the usual form, or the end of the stream.
_PLAIN_GAME = re.compile(
    rb'((?:\[[A-Za-z0-9]+ "[^"\\\r\n]*"\]\n)+)\n'
    rb"([^\s\[%\xef](?:[^\r\n]*[^\s])?)"
    rb'(?:\n\n+(?=\[[A-Za-z0-9]+ "[^\r\n]*"\]\n)|\n*\Z)'
)
#: Whole lines without a game break are held up to this many bytes (a game cut by a chunk's
#: end waits for the rest of it), then scanned line by line: memory stays at a chunk.
_BLOCK_CARRY_LIMIT: Final = 1 << 16


def _plain_game(tags: bytes, movetext: bytes, line: int) -> PGNGame | None:
    """The game :func:`_cut_lines` would give for these tag lines and movetext line (matched
    by :data:`_PLAIN_GAME`, so a tag line follows it, which ends it), or ``None`` when it
    would give something else: a repeated tag (a new game there), a movetext ending inside a
    comment (the tag line after it is comment), text that is not UTF-8 (read line by line)."""
    o = movetext.rfind(b"{")
    if o >= 0 and o > movetext.rfind(b"}"):
        return None
    try:
        head = tags.decode("utf-8")
        moves = movetext.decode("utf-8")
    except UnicodeDecodeError:
        return None
    # "]\n[Name " and the values alternate between the quotes (the values hold none)
    parts = ("]\n" + head).split('"')
    names = "".join(parts[::2])[3:-3].split(" ]\n[")
    values = parts[1::2]
    headers = dict(zip(names, values, strict=True))
    if len(headers) != len(names):  # a tag twice: the scanner starts a new game there
        return None
    if not headers.keys() <= _TAG_SPELLINGS:
        headers = {_CANONICAL_TAGS.get(k.lower(), k): v for k, v in headers.items()}
    return PGNGame(headers, moves, (head + moves).strip() + "\n", line)


def scan_blocks(blocks: Iterable[bytes], max_game_bytes: int = MAX_PGN_GAME_BYTES
                ) -> Iterator[PGNGame | GameTooLarge | NotAGame | None]:
    """:func:`scan_games` of the lines in ``blocks`` (runs of whole lines, and
    :class:`OversizedLine`, as :func:`~tracker.sources.limits.capped_blocks` gives them): the
    same games, line numbers and skips, without a Python step per line for the games laid out
    as Lichess exports them (:data:`_PLAIN_GAME`), each cut and read by a few regex calls.
    Anything else goes line by line through the scanner's :class:`_GameCutter`, which also
    ends the game before a plain one (:meth:`_GameCutter.close_before`).
    ``tests/test_scan_blocks.py`` checks it against :func:`scan_games`.
    """
    cut = _GameCutter(None, max_game_bytes)
    lineno = 0
    carry = b""
    for block in blocks:
        if block.__class__ is OversizedLine:
            yield from _lines_cut(cut, [*io.BytesIO(carry), block], lineno)
            lineno += carry.count(b"\n") + 1
            carry = b""
            continue
        buf = carry + block if carry else block
        end = buf.rfind(b"\n\n[") + 2  # whole games: up to the last game break
        if end < 2:
            if len(buf) <= _BLOCK_CARRY_LIMIT:
                carry = buf
                continue
            end = len(buf)  # no game break in sight: whole lines all the same
        items, lineno = _scan_block(cut, buf, end, lineno)
        yield from items
        carry = buf[end:]
    if carry:
        items, lineno = _scan_block(cut, carry, len(carry), lineno, last=True)
        yield from items
    yield from cut.end()


def _scan_block(cut: _GameCutter, buf: bytes, end: int, lineno: int, last: bool = False
                ) -> tuple[list[PGNGame | GameTooLarge | NotAGame | None], int]:
    """The games of ``buf[:end]`` (whole lines; ``last``: the stream ends there) for
    :func:`scan_blocks`, and the line number reached."""
    out: list[PGNGame | GameTooLarge | NotAGame | None] = []
    pos = 0
    while pos < end:
        plain = _plain_at(cut, buf, pos, lineno, last)
        if plain is None:  # line by line up to the next game break
            stop = buf.find(b"\n\n[", pos, end)
            stop = end if stop < 0 else stop + 2
            out.extend(_lines_cut(cut, io.BytesIO(buf[pos:stop]), lineno))
        else:
            games, stop = plain
            out.extend(games)
        lineno += buf.count(b"\n", pos, stop)
        pos = stop
    return out, lineno


def _plain_at(cut: _GameCutter, buf: bytes, pos: int, lineno: int, last: bool
              ) -> tuple[_Out, int] | None:
    """The plain game (:data:`_PLAIN_GAME`) at ``buf[pos:]``, after what the cutter's game
    before it completes, and where it stops; ``None`` (the cutter unchanged) when the game
    there is not plain, or not known whole (``buf`` ends with it and more may follow)."""
    m = _PLAIN_GAME.match(buf, pos)
    if m is None or (m.end() == len(buf) and not last) or m.end() - pos > cut.cap:
        return None
    tags = m.group(1)
    game = _plain_game(tags, m.group(2), lineno + 1)
    if game is None:
        return None
    before = cut.close_before(tags[1 : tags.find(b" ")])
    if before is None:
        return None
    return (*before, game), m.end()


def split_games(lines: Iterable[bytes] | Iterable[str]) -> Iterator[PGNGame]:
    """Every game of a PGN stream (see :func:`scan_games`), lazily."""
    for game in scan_games(lines):
        if isinstance(game, PGNGame):
            yield game


def count_plies(movetext: str) -> int:
    """Half-moves in the main line, as python-chess's movetext tokenizer finds them.

    Comments, NAGs, move numbers, the result, null moves (``--``) and side variations
    ``( … )`` are not moves. Comments and variations are cut out first; the moves are then
    counted by one ``findall`` of the move part of :data:`chess.pgn.MOVETEXT_REGEX`, in C,
    not token by token in Python (this is the hot spot of a PGN import). Movetext as Lichess
    exports it (:data:`_PLAIN_MOVETEXT`, checked by one ``fullmatch``) is counted by its
    separators instead, at a third of the cost; ``tests/test_count_plies.py`` finds both counts
    equal.
    """
    if _PLAIN_MOVETEXT.fullmatch(movetext):
        return movetext.count(" ") + movetext.count("\n") - movetext.count(".")
    return count_plies_tokenized(movetext)


def count_plies_tokenized(movetext: str) -> int:
    """:func:`count_plies` for any movetext: comments and variations cut out, then one
    ``findall`` of :data:`_SAN`."""
    if "{" in movetext or ";" in movetext:
        movetext = _COMMENTS.sub(" ", movetext)
    if "(" in movetext or ")" in movetext:
        movetext = _without_variations(movetext)
    return len(_SAN.findall(movetext))


def _without_variations(movetext: str) -> str:
    """The main line: every ``( … )`` (nested to any depth) replaced by a space, an
    unmatched ``)`` too, and an unclosed ``(`` cut with everything after it. One pass over the
    text cut at each ``(``, in time linear in its length (removing the innermost level per
    pass was quadratic: 77 s for 100,000 nested variations in 200 KB)."""
    parts = movetext.split("(")
    out = [parts[0].replace(")", " ")]
    depth = 0  # variations open
    for part in parts[1:]:  # each part follows a "(" and holds no "("
        depth += 1
        closes = part.count(")")
        if closes < depth:
            depth -= closes  # still inside a variation
            continue
        rest = part.split(")", depth)[depth]  # after the ")" that ends the variation
        depth = 0
        out.append(" ")
        out.append(rest.replace(")", " "))
    return "".join(out)  # an unclosed variation (depth > 0) is cut: nothing of it was added


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
        name=name or None,
        title=(h.get(f"{color}Title") or "").strip() or None,
        rating=rating,
        rating_diff=_diff(h.get(f"{color}RatingDiff")),
    )


def _datetime(h: dict[str, str]) -> datetime:
    date = (h.get("UTCDate") or "").strip()
    if not date or "?" in date[:4]:
        date = (h.get("Date") or "").strip()
    time_ = (h.get("UTCTime") or "00:00:00").strip()
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


def _speed(h: dict[str, str], initial: int | None, increment: int | None) -> str | None:
    """The speed from ``TimeControl``; without one, from the ``Event`` words; else unknown.

    ``TimeControl "-"`` is Lichess's correspondence. A file with no ``TimeControl`` at all
    (other sites, hand-made PGN) says nothing of the clock: the ``Event`` may ("Rated Rapid
    game", "Club blitz"), and otherwise the speed, and so the perf, stay unknown.
    """
    tc = (h.get("TimeControl") or "").strip()
    if initial is not None or tc == "-":
        return speed_from_clock(initial, increment)
    event = (h.get("Event") or "").lower()
    for word, speed in _EVENT_SPEEDS:
        if word in event:
            return speed
    return None


def _rated(h: dict[str, str]) -> bool | None:
    """Rated per the tags: a ``RatingDiff`` tag or an Event "Rated …" (any case) → True;
    "Casual …" or a simul → False; otherwise (old exports, arena names) unknown → None."""
    event = (h.get("Event") or "").strip().lower()
    if "WhiteRatingDiff" in h or "BlackRatingDiff" in h or event.startswith("rated"):
        return True
    if event.startswith("casual") or event.endswith(" simul"):
        return False
    return None


def _result(h: dict[str, str], movetext: str) -> str | None:
    tag = (h.get("Result") or "").strip()
    if tag in RESULTS:
        return tag
    if tag in _RESULT_TOKENS:
        return _RESULT_TOKENS[tag]
    if not tag:  # no Result tag: the movetext's termination marker says it
        tokens = movetext.split()
        if tokens and tokens[-1] in _RESULT_TOKENS:
            return _RESULT_TOKENS[tokens[-1]]
    return None


def is_study_chapter(h: dict[str, str]) -> bool:
    """A Lichess study chapter (``Site …/study/…`` or ``StudyName``/``ChapterName`` tags)."""
    return "/study/" in h.get("Site", "") or "StudyName" in h or "ChapterName" in h


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
    if is_study_chapter(h):
        raise StudyError("a Lichess study chapter, not a game between two players")
    created = _datetime(h)
    variant_tag = (h.get("Variant") or "Standard").strip().lower()
    variant = VARIANT_KEYS.get(variant_tag, variant_tag.replace(" ", "").replace("-", ""))
    fen = (h.get("FEN") or "").strip() or None
    if variant == "standard" and (fen or h.get("SetUp", "").strip() == "1"):
        variant = "fromPosition"
    initial, increment = _clock(h.get("TimeControl"))
    speed = _speed(h, initial, increment)
    perf = speed if variant in ("standard", "fromPosition") else variant
    tour = _TOURNAMENT.search(h.get("Event", "") + " " + h.get("Site", ""))
    termination = (h.get("Termination") or "").strip().lower()
    eco = (h.get("ECO") or "").strip()
    opening = (h.get("Opening") or "").strip()
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
        result=_result(h, game.movetext),
        plies=count_plies(game.movetext),
        clock_initial=initial,
        clock_increment=increment,
        initial_fen=fen,
        eco=eco if eco and eco != "?" else None,
        opening_name=opening if opening and opening != "?" else None,
        tournament_id=tour.group(1) if tour else None,
        white=_side(h, "White"),
        black=_side(h, "Black"),
        raw=game.raw,
        analysis=pgn_analysis(game.movetext),
    )


def ends_with_result(movetext: str) -> bool:
    """True when the movetext ends with a game termination marker (``1-0``, ``0-1``,
    ``1/2-1/2``, ``*``), as every exported game does (PGN spec 8.2.6)."""
    return movetext.rstrip().endswith(("1-0", "0-1", "1/2-1/2", "*"))


@dataclass
class _Records:
    """Turns cut games into records for :func:`read_pgn`, counting on ``log`` what it skips
    or repairs (and in ``errors`` the games it cannot read)."""

    log: ReadLog
    errors: list[str] | None
    max_game_bytes: int
    dropped: int = 0  # games of other players
    rated_unknown: int = 0
    no_perf: int = 0

    def skip(self, item: GameTooLarge | NotAGame | None) -> None:
        """Count what the scanner gave that is no game to read."""
        if item is None:
            self.dropped += 1
        elif isinstance(item, GameTooLarge):
            self.log.skip(SKIP_TOO_LARGE, f"game at line {item.line}: {item.size:,} bytes, "
                          f"over the limit of {self.max_game_bytes:,}: skipped")
        else:
            self.log.skip(SKIP_NOT_A_GAME, f"line {item.line}: text after a game that is no "
                          f"game ({item.text!r}…): ignored")

    def drop(self, seen: int, games: int, progress: Callable[[int], None] | None) -> int:
        """Count ``games`` games of other players after ``seen`` games; the progress calls
        are those one game at a time would make. The games seen then."""
        self.dropped += games
        if progress is not None:
            for at in range((seen // PROGRESS_EVERY + 1) * PROGRESS_EVERY, seen + games + 1,
                            PROGRESS_EVERY):
                progress(at)
        return seen + games

    def _reject(self, reason: str, game: PGNGame, problem: str) -> None:
        message = f"game at line {game.line}: {problem}"
        self.log.skip(reason, message)
        if self.errors is not None:
            self.errors.append(message)

    def _parsed(self, game: PGNGame) -> GameRecord | None:
        try:
            record = record_from_pgn(game)
        except StudyError as exc:
            self.log.skip(SKIP_STUDY, f"game at line {game.line}: {exc}")
            return None
        except PGNError as exc:
            self._reject(SKIP_UNREADABLE, game, str(exc))
            return None
        except (ValueError, OverflowError, TypeError) as exc:  # e.g. a 5,000-digit rating
            problem: str | None = f"{type(exc).__name__}: {str(exc)[:120]}"
        else:
            problem = invalid_value(record)
            raw = record.raw
            if problem is None and ("\x00" in raw or not raw.isascii()):
                problem = unstorable_text(record)  # a NUL byte in a tag, a lone surrogate
        if problem is not None:
            self._reject(SKIP_INVALID, game, f"invalid value: {problem}")
            return None
        return record

    def record(self, game: PGNGame) -> GameRecord | None:
        """The game's record, or ``None`` when it is skipped (counted)."""
        record = self._parsed(game)
        if record is None:
            return None
        if game.repaired:
            self.log.repair(REPAIRED_ENCODING, f"game at line {game.line}: not UTF-8, read as "
                            "cp1252/latin-1")
        if record.rated is None:
            self.rated_unknown += 1
        if record.perf is None:
            self.no_perf += 1
        return record

    def last(self, game: PGNGame) -> GameRecord | None:
        """The stream's last game: read only when its moves end with a result, since a file
        cut in the middle of a game leaves a game that looks whole but has lost moves."""
        if ends_with_result(game.movetext):
            return self.record(game)
        self.log.skip(SKIP_CUT_GAME, f"game at line {game.line}: its moves stop before a "
                      "result")
        self.log.truncated = (
            f"the last game (line {game.line}) is cut before its result: the file is "
            "incomplete; every game before it was read"
        )
        return None

    def close(self) -> None:
        """Count the dropped games, and say once what was stored without a rated flag or
        perf (whatever the cap on messages)."""
        if self.dropped:
            self.log.skip(SKIP_NOT_PLAYER, n=self.dropped)
        if self.rated_unknown:
            self.log.messages.append(
                f"{self.rated_unknown} game(s) do not say whether they were rated (no "
                "\"Rated\" or \"Casual\" Event, no RatingDiff tag): stored, but not counted "
                "in a replay (\"rated unknown\")"
            )
        if self.no_perf:
            self.log.messages.append(
                f"{self.no_perf} game(s) have no TimeControl and no speed in their Event: "
                "stored, but in no perf (bullet, blitz, …), so in no replay"
            )


def read_pgn(
    lines: Iterable[bytes] | Iterable[str] | Iterable[bytes | Dropped],
    *,
    players: Collection[str] | None = None,
    log: ReadLog | None = None,
    errors: list[str] | None = None,
    progress: Callable[[int], None] | None = None,
    max_game_bytes: int = MAX_PGN_GAME_BYTES,
    blocks: bool = False,
) -> Iterator[GameRecord]:
    """Parse PGN lines (bytes or text) lazily into records.

    ``blocks``: ``lines`` are runs of whole byte lines (:meth:`~tracker.sources.files.
    InputFile.byte_blocks`), cut by :func:`scan_blocks` when no ``players`` are given.

    A game over ``max_game_bytes`` is skipped as "game too large" (never held in memory);
    text after a game's termination marker that is no game as "not a game".

    ``players``: keep only games of these names (see :func:`scan_games`); the others are
    counted in ``log`` as "not the player's game". A game that cannot be read is skipped and
    counted ("unreadable game", with ``"game at line N: reason"`` in ``log.messages`` and in
    ``errors`` when given); a study chapter is skipped as "study chapter"; a game read as
    cp1252 is counted as repaired. Games that do not say whether they were rated (old
    exports, tournament names) or whose speed is unknown are stored and said so once in
    ``log.messages``.
    ``progress(games_seen)`` is called every :data:`PROGRESS_EVERY` games, kept or dropped.
    """
    records = _Records(log if log is not None else ReadLog(), errors, max_game_bytes)
    # One game of look-ahead: the last game of the stream is checked for its end.
    pending: PGNGame | None = None
    try:
        games = (scan_blocks(cast("Iterable[bytes]", lines), max_game_bytes)
                 if blocks and players is None else
                 _scan_counted(lines_of_blocks(cast("Iterable[bytes]", lines)) if blocks
                               else lines, players, max_game_bytes))
        seen = 0
        for game in games:
            if isinstance(game, int):  # games a chunk filter dropped, counted at once
                seen = records.drop(seen, game, progress)
                continue
            seen += 1
            if progress is not None and seen % PROGRESS_EVERY == 0:
                progress(seen)
            if not isinstance(game, PGNGame):
                records.skip(game)
                continue
            if pending is not None and (record := records.record(pending)) is not None:
                yield record
            pending = game
        if pending is not None and (record := records.last(pending)) is not None:
            yield record
    finally:
        records.close()
