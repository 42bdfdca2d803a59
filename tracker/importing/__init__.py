"""The import runner: drives any source into the store, for files and the Lichess API alike.

- :mod:`~tracker.importing.runner`: the shared core, :class:`ImportRecorder` (batches, counts,
  players, the run record) and :class:`ImportSummary`;
- :mod:`~tracker.importing.files`: NDJSON/PGN files → the store;
- :mod:`~tracker.importing.lichess`: the Lichess API → the store, with the sync cursor and the
  rating history (imported on its own: a file import never loads the HTTP client).
"""

from __future__ import annotations

from tracker.importing.files import import_file, import_inputs
from tracker.importing.runner import (
    DEFERRED_SIGNALS,
    SKIP_NOT_STORED,
    ImportRecorder,
    ImportSummary,
    Progress,
    interrupted_message,
    interrupts_deferred,
)

__all__ = [
    "DEFERRED_SIGNALS",
    "SKIP_NOT_STORED",
    "ImportRecorder",
    "ImportSummary",
    "Progress",
    "import_file",
    "import_inputs",
    "interrupted_message",
    "interrupts_deferred",
]
