"""tracker: replay your Lichess games as FIDE rating periods."""

__version__ = "0.1.0"
