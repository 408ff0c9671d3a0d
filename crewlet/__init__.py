"""Crewlet learning: the project package (settings, org, config, API)."""
