"""Harness transcripts into vetted lessons: adapters, scrubbing, shards, the ladder, artifacts."""
