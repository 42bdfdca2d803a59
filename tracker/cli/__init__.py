"""The ``tracker`` command: typer sub-apps, thin over :mod:`tracker.api`."""
