"""The Streamlit dashboard (``tracker dashboard``); ``app.py`` is the entry point."""
