"""Alembic environment for tracker.

Used two ways: by :func:`tracker.store.engine.migrate`, which hands over an open connection in
``config.attributes["connection"]`` (every database is upgraded when it is opened), and by the
``alembic`` command for developers (``alembic -x db=URL revision --autogenerate -m "..."``),
where the URL comes from ``-x db=…``, ``$TRACKER_DB`` or the default database.
"""

from __future__ import annotations

from alembic import context
from sqlalchemy import Connection

from tracker.store.models import Base

config = context.config
target_metadata = Base.metadata


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=connection.dialect.name == "sqlite",  # SQLite cannot ALTER most things
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    from tracker.core.config import database_url
    from tracker.store.engine import create_db_engine

    url = context.get_x_argument(as_dictionary=True).get("db")
    engine = create_db_engine(database_url(url))
    with engine.begin() as conn:
        _run(conn)


if context.is_offline_mode():
    raise SystemExit("tracker's migrations run online only (they need a connection)")
run_migrations_online()
