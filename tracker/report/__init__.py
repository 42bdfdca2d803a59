"""What every view shows, computed from the store through the pure cores: the selection,
the Lichess line, the replay passes and reports, strength, groups, calibration."""
