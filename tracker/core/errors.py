"""The errors tracker reports to people: one line each, never a traceback.

Every error a user can cause (a bad file, an unknown player, a database that cannot be opened)
derives from :class:`TrackerError`; the CLI prints its message on one line and exits with
:attr:`TrackerError.exit_code`, and the dashboard shows it as a message.
"""

from __future__ import annotations

from typing import Protocol


class TrackerError(Exception):
    """Base of the errors meant for the user. ``str(err)`` is one line."""

    exit_code = 1


class DashboardError(TrackerError):
    """``tracker dashboard`` cannot start: a port out of range or in use, an address that is
    not this machine's."""


class ReadOnlyError(TrackerError):
    """A write asked of a database opened read-only (``tracker dashboard --read-only``, or
    ``$TRACKER_READ_ONLY``): refused before anything is written (exit code 1)."""


class ArgumentError(TrackerError, ValueError):
    """A command's argument is malformed or out of range (exit code 2, like a usage error)."""

    exit_code = 2


class Terminated(KeyboardInterrupt):
    """The process was asked to stop (SIGTERM): handled as Ctrl+C is (what was kept is said,
    the import run is recorded as partial), with exit code 143."""


class DiskFullError(TrackerError):
    """The database's disk (or quota) is full: the import stops, every batch written before
    is kept, the run is recorded as partial where the database still takes that."""


class PortError(DashboardError, ArgumentError):
    """A ``--port`` outside 1–65535: a malformed value, so a usage error (exit code 2)."""


class NoAnalysisError(TrackerError, LookupError):
    """No stored evals for the player (in that perf) or the game (exit code 1): raised by
    the strength report, shown by every view as one line."""


class RunSummary(Protocol):
    """What a run says it did, in one line (an import's or an analysis's summary)."""

    def line(self) -> str: ...


class InterruptedRun(KeyboardInterrupt):
    """A run stopped by Ctrl+C, raised by the import and analysis runners in place of the
    KeyboardInterrupt, with what the run kept (``summary``, ended ``partial``) for the
    caller's last line; still a KeyboardInterrupt for whoever stops on one."""

    def __init__(self, summary: RunSummary) -> None:
        super().__init__()
        self.summary = summary

    @staticmethod
    def of(interrupt: KeyboardInterrupt, summary: RunSummary) -> InterruptedRun:
        """The run's exception for ``interrupt``: :class:`TerminatedRun` after SIGTERM."""
        if isinstance(interrupt, Terminated):
            return TerminatedRun(summary)
        return InterruptedRun(summary)


class TerminatedRun(InterruptedRun, Terminated):
    """A run stopped by SIGTERM (:class:`Terminated`: exit code 143), with its summary."""
