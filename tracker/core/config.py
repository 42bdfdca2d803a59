"""Where things are: the database URL, the Lichess base URL, the API token, the data folder.

Precedence everywhere: an explicit argument (a CLI flag) > an environment variable > a default.
This module is the only one that reads the environment (``os.environ``): the rest of tracker
asks the functions below (:func:`read_only`, :func:`engine`, :func:`one_process`, …).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Final

from tracker._version import __version__

APP_NAME: Final = "tracker"
PROJECT_URL: Final = "https://github.com/tracker-chess/tracker"

#: Environment variables.
ENV_DB: Final = "TRACKER_DB"
ENV_BASE_URL: Final = "LICHESS_BASE_URL"
ENV_TOKEN: Final = "LICHESS_TOKEN"
#: Set (``1``, ``true``, ``yes``) to open every database read-only: what ``tracker dashboard
#: --read-only`` sets for the app it serves.
ENV_READ_ONLY: Final = "TRACKER_READ_ONLY"
#: The UCI engine ``tracker analyse`` runs (a path or a name on the PATH).
ENV_ENGINE: Final = "TRACKER_ENGINE"
#: ``TRACKER_PROCESSES=1``: every job in one process (:mod:`tracker.core.forked`).
ENV_PROCESSES: Final = "TRACKER_PROCESSES"

DEFAULT_BASE_URL: Final = "https://lichess.org"

#: Sent on every request to Lichess: Lichess answers 404 to generic client User-Agents
#: (``python-requests``, ``curl``…), and a descriptive one is its stated etiquette.
USER_AGENT: Final = f"tracker/{__version__} (+{PROJECT_URL})"


def data_dir() -> Path:
    """The user data folder (platformdirs), e.g. ``~/.local/share/tracker`` on Linux."""
    import platformdirs  # here: only the default database needs it (~5 ms of a start-up)

    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))


def database_url(db: str | os.PathLike[str] | None = None) -> str:
    """The SQLAlchemy URL of the database to use.

    ``db`` may be a SQLAlchemy URL (``sqlite:///x.db``, ``postgresql+psycopg://…``) or a file
    path; ``None`` falls back to ``$TRACKER_DB``, then to ``tracker.db`` in :func:`data_dir`.
    """
    value = os.fspath(db) if db is not None else db_from_env()
    if value is None:
        path = data_dir() / "tracker.db"
        path.parent.mkdir(parents=True, exist_ok=True)
        return f"sqlite:///{path}"
    if "://" in value:
        return value
    if value == ":memory:":
        return "sqlite://"
    return f"sqlite:///{Path(value).expanduser().resolve()}"


def url_problem(url: str) -> str | None:
    """Why ``url`` is no database URL at all (``"its port is not a number"``, or SQLAlchemy's
    reason), or ``None`` when it can be read (whether the database opens is another matter)."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        make_url(url)
    except ArgumentError as exc:
        return str(exc)
    except ValueError:  # int() of the port, the only ValueError of make_url
        return "its port is not a number"
    return None


#: The password of a URL that SQLAlchemy cannot read: ``scheme://user:PASSWORD@`` and
#: ``password=`` (or ``passwd``, ``sslpassword``) in the query.
_SECRET_IN_URL = re.compile(r"(://[^/@:]*:)[^/@]*@|((?:ssl)?passw(?:or)?d=)[^&]*", re.IGNORECASE)


def shown_url(url: str) -> str:
    """A database URL fit to show: the password hidden (``***``), in the user part and in a
    ``password=`` query parameter (libpq reads both). A file path stays as it is."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        parsed = make_url(url)
    except (ArgumentError, ValueError):  # not a URL; a port that is not a number
        return _SECRET_IN_URL.sub(lambda m: f"{m.group(1) or m.group(2)}***"
                                  + ("@" if m.group(1) else ""), url)
    secret = ("password", "passwd", "sslpassword")
    query = {k: ("***" if k.lower() in secret else v) for k, v in parsed.query.items()}
    return parsed.set(query=query).render_as_string(hide_password=True)


def read_only() -> bool:
    """Whether ``$TRACKER_READ_ONLY`` asks for read-only databases (``1``, ``true``, ``yes``,
    ``on``, any case)."""
    return os.environ.get(ENV_READ_ONLY, "").strip().lower() in ("1", "true", "yes", "on")


def base_url(url: str | None = None) -> str:
    """The Lichess server: ``url`` > ``$LICHESS_BASE_URL`` > ``https://lichess.org``."""
    return (url or os.environ.get(ENV_BASE_URL) or DEFAULT_BASE_URL).rstrip("/")


def token(token_file: str | os.PathLike[str] | None = None) -> str | None:
    """The Lichess API token from ``token_file`` or ``$LICHESS_TOKEN``; ``None`` if neither.

    The token is only ever sent as the Authorization header: never printed, logged or stored.
    Raises FileNotFoundError (with the path) when ``token_file`` does not exist.
    """
    if token_file is not None:
        text = Path(token_file).expanduser().read_text(encoding="utf-8").strip()
        return text or None
    return os.environ.get(ENV_TOKEN) or None


def db_from_env() -> str | None:
    """``$TRACKER_DB`` (``None``: unset or empty)."""
    return os.environ.get(ENV_DB) or None


def engine() -> str | None:
    """``$TRACKER_ENGINE`` (``None``: unset or empty)."""
    return os.environ.get(ENV_ENGINE) or None


def one_process() -> bool:
    """Whether ``$TRACKER_PROCESSES`` is ``1``: no job forked beside this process."""
    return os.environ.get(ENV_PROCESSES, "") == "1"


def child_environment(db_url: str, *, read_only: bool) -> dict[str, str]:
    """This process's environment for a child process of tracker (the dashboard's server): with
    ``$TRACKER_DB`` set to ``db_url``, ``$TRACKER_READ_ONLY`` to ``1`` if ``read_only`` (else
    unset), and ``PYTHONSAFEPATH=1`` (the working folder left off the child's import path)."""
    env = dict(os.environ, **{ENV_DB: db_url}, PYTHONSAFEPATH="1")
    env.pop(ENV_READ_ONLY, None)
    if read_only:
        env[ENV_READ_ONLY] = "1"
    return env
