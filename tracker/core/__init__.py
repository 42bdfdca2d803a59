"""The bottom floor: the record types, errors, the environment read once (config), time,
exact numbers, codecs, the perf vocabulary. Imports nothing of tracker above it."""
