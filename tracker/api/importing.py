"""Getting games in: ``tracker import-file``, ``tracker import``, ``tracker demo`` and the
import runs (``tracker runs``); the Lichess token is checked here, never shown."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import asdict
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from tracker.api._db import check_database, check_writable, open_store
from tracker.core.errors import ArgumentError

if TYPE_CHECKING:
    from tracker.api._db import Db
    from tracker.importing import ImportSummary, Progress
    from tracker.store.db import Store
    from tracker.store.games import WrittenGames
    from tracker.store.queries import RunInfo


#: The bundled demo history (see ``tracker/data/PROVENANCE.md``).
DEMO_USER = "indexinator"


DEMO_FILE = "indexinator-2023-04_2025-10.ndjson.zst"
#: His next 10 games, 9 with Lichess's evals: the demo shows accuracy, levels, turning points.
DEMO_ANALYSED_FILE = "indexinator-2025-10-later.ndjson.zst"


def import_file(
    paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    *,
    db: Db = None,
    user: str | Sequence[str] | None = None,
    progress: Progress | None = None,
) -> ImportSummary:
    """``tracker import-file``: import NDJSON/PGN files; see :func:`tracker.importing.import_file`.

    Every input is checked before the database is opened: when none can be imported nothing
    changes (InputError); of several, those that can be read are imported and the others
    named in the run's message (it ends ``partial``).
    """
    from tracker.importing import import_inputs
    from tracker.sources.files import open_inputs
    from tracker.store.games import WrittenGames

    check_writable(db, "importing games")
    check_database(db, create=True)
    unreadable: list[str] = []
    inputs = open_inputs(paths, unreadable=unreadable)
    store = open_store(db, create=True)
    written = WrittenGames()
    summary = import_inputs(inputs, store=store, user=user, progress=progress,
                            unreadable=unreadable, written=written)
    return _prepared(store, summary, written)


def import_uploads(
    uploads: Sequence[tuple[str, bytes]],
    *,
    db: Db = None,
    user: str | Sequence[str] | None = None,
    progress: Progress | None = None,
) -> ImportSummary:
    """:func:`import_file` of files sent with their names (the dashboard's upload): each
    ``(name, content)`` is written to a private temporary folder of its own under the last
    part of its name (:func:`upload_name`: ``..``, a path, a NUL never leave it) and the files
    are imported as one run; the folder is removed after."""
    import tempfile

    check_writable(db, "importing games")
    with tempfile.TemporaryDirectory(prefix="tracker-upload-") as tmp:
        paths = []
        for i, (name, content) in enumerate(uploads):
            folder = Path(tmp) / str(i)  # a folder per file: two of one name are two files
            folder.mkdir()
            path = folder / upload_name(name)
            path.write_bytes(content)
            paths.append(path)
        return import_file(paths, db=db, user=user, progress=progress)


def upload_name(name: str) -> str:
    """A file name fit to write an upload under: the last part of ``name`` (after any ``/``
    or ``\\``), at most 100 characters (its end kept: the extension names the compression),
    ``upload`` for ``..``, ``.``, an empty name or one with a NUL."""
    last = name.replace("\\", "/").rsplit("/", 1)[-1].strip()
    if last in ("", ".", "..") or "\x00" in last:
        return "upload"
    return last if len(last) <= 100 else "upload-" + last[-93:]


def _prepared(store: Store, summary: ImportSummary, written: WrittenGames | None = None
              ) -> ImportSummary:
    """After an import that changed a tracked player's games: their replay passes and each
    default scale's replay of them computed and saved now
    (:func:`tracker.report.scale_runs.refresh`), so the first report after the import reads a few
    rows per perf instead of every game; from the games the import kept in ``written``
    where they are all there is."""
    if summary.player is None or not (summary.new or summary.updated) or summary.players:
        return summary
    from tracker.report.scale_runs import refresh
    from tracker.store import queries

    if queries.is_tracked(store, summary.player):
        refresh(store, summary.player, written)
    return summary


def import_user(
    username: str,
    *,
    db: Db = None,
    perf: str | Sequence[str] | None = None,
    since: str | int | date | datetime | None = None,
    full: bool = False,
    base_url: str | None = None,
    token: str | None = None,
    token_file: str | os.PathLike[str] | None = None,
    progress: Progress | None = None,
    retry_wait_429: float = 60.0,
    retry_wait: float = 2.0,
    timeout: tuple[float, float] = (5.0, 30.0),
    max_retries: int = 5,
    on_wait: Callable[[str], None] | None = None,
) -> ImportSummary:
    """``tracker import``: a player's games from the Lichess API, incrementally.

    ``perf``: ``"blitz,rapid"`` or a list; ``since``: a floor (``YYYY-MM-DD``, date, aware
    datetime, integer ms); ``full``: read everything again. The token: ``token`` >
    ``token_file`` > ``$LICHESS_TOKEN``; it is only sent as the Authorization header. The base
    URL: ``base_url`` > ``$LICHESS_BASE_URL`` > ``https://lichess.org``. ``retry_wait_429``:
    seconds to wait after an HTTP 429; ``retry_wait``: first pause before resuming a broken
    stream; ``timeout``: (connect, read) seconds; ``max_retries``: attempts in a row without a
    new game before stopping as partial. ``on_wait``: told one line each time Lichess asks to
    wait (HTTP 429: ``"Lichess asked to wait (HTTP 429, too many requests): resuming the
    download again in 60 s"``), before the wait; the summary's warnings say the waits. See
    :mod:`tracker.importing.lichess`.

    Raises UnknownUserError (exit code 1, as an unknown player) for an unknown or closed
    account, before the database is even opened.
    """
    from tracker.importing import lichess as importing_lichess

    check_writable(db, "importing games")
    options = importing_lichess.LichessOptions(
        perf=perf, since=since, full=full, base_url=base_url,
        token=resolve_token(token, token_file), retry_wait_429=retry_wait_429,
        retry_wait=retry_wait, timeout=timeout, max_retries=max_retries, on_wait=on_wait)
    check_database(db, create=True)
    # the account is checked before the database is opened
    job = importing_lichess.connect(username, options)
    store = open_store(db, create=True)
    return _prepared(store, importing_lichess.run_import(job, store=store, progress=progress))


_TOKEN_HELP = "a Lichess API token is one line of letters, digits and _ (lip_…)"


def resolve_token(token: str | None = None,
                  token_file: str | os.PathLike[str] | None = None) -> str | None:
    """The API token to use: ``token`` > ``token_file`` > ``$LICHESS_TOKEN`` (``None``: none),
    checked by :func:`check_token`. Raises TokenError (exit code 2: an unreadable file, a
    malformed token), never with the token in the message."""
    from tracker.core import config
    from tracker.sources.lichess import TokenError

    where = "the token given"
    if token is None:
        where = "the token file" if token_file is not None else "$LICHESS_TOKEN"
        try:
            token = config.token(token_file)
        except OSError as exc:
            raise TokenError(
                f"cannot read the token file {token_file}: {exc.strerror or exc}"
            ) from None
        except UnicodeDecodeError:
            raise TokenError(
                f"the token file {token_file} is not text: {_TOKEN_HELP}") from None
    return None if token is None else check_token(token, where)


def check_token(token: str, where: str = "the token") -> str:
    """The token without surrounding whitespace, checked before any request: a line break
    inside it (a two-line token file, a pasted newline) or characters no token has (spaces,
    control or non-ASCII characters, which an HTTP header cannot carry) raise TokenError (exit
    code 2) with a message that never holds the token; ``where`` says where it came from."""
    from tracker.sources import lichess

    token = token.strip()
    if "\n" in token or "\r" in token:
        raise lichess.TokenError(f"the token has a line break: {_TOKEN_HELP} (check {where})")
    if not token.isascii() or not all(33 <= ord(c) <= 126 for c in token):
        raise lichess.TokenError(
            f"the token has characters a token cannot have: {_TOKEN_HELP} (check {where})")
    return token


#: The largest ``limit`` of :func:`runs`: what a database's LIMIT takes (a signed 32-bit
#: integer); beyond it SQLite raises OverflowError.
MAX_RUNS_LIMIT: Final = 2**31 - 1


def runs(*, db: Db = None, limit: int = 20) -> list[RunInfo]:
    """``tracker runs``: the last ``limit`` import runs, newest first.

    A run whose process is gone (killed, the machine stopped) is marked ``interrupted`` first
    (see :mod:`tracker.importing.run_liveness`); its counts are what it stored. Statuses:
    ``running``, ``complete``, ``partial``, ``failed``, ``interrupted``. Raises ArgumentError
    (exit 2) for a ``limit`` below 1 or above :data:`MAX_RUNS_LIMIT`.
    """
    from tracker.importing.run_liveness import mark_interrupted
    from tracker.store import queries

    if not 1 <= limit <= MAX_RUNS_LIMIT:
        raise ArgumentError(f"--limit must be 1 to {MAX_RUNS_LIMIT}, not {limit}")
    store = open_store(db)
    if not store.read_only:  # a read-only store says what is stored, changing nothing
        mark_interrupted(store)
    return queries.import_runs(store, limit=limit)


def run_dict(run: RunInfo) -> dict[str, Any]:
    """An import run as JSON-able data (times as ISO 8601 UTC, ``None`` when unknown)."""
    from tracker.core.records import ms_to_datetime

    data = asdict(run)
    for key in ("started_at_ms", "finished_at_ms"):
        ms = data.pop(key)
        data[key.removesuffix("_ms")] = (None if ms is None else
                                         ms_to_datetime(ms).isoformat().replace("+00:00", "Z"))
    return data


def demo_file(name: str = DEMO_FILE) -> Path:
    """Path of a bundled real Lichess export (zstd-compressed NDJSON): the history, or
    :data:`DEMO_ANALYSED_FILE`."""
    from importlib import resources  # here, not at import: ~5 ms of every command's start

    return Path(str(resources.files("tracker") / "data" / name))


def demo(*, db: Db = None, progress: Progress | None = None) -> ImportSummary:
    """``tracker demo``: import the bundled history of ``indexinator`` (2,907 games) and his
    next 10 games, 9 with Lichess's evals (2,917 games in all)."""
    return import_file([demo_file(), demo_file(DEMO_ANALYSED_FILE)], db=db, user=DEMO_USER,
                       progress=progress)


def summary_dict(summary: ImportSummary) -> dict[str, Any]:
    """An import summary as plain JSON-able data."""
    return asdict(summary)
