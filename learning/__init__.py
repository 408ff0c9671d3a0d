"""Agent learning: reflection, memory, skills, prefetch, background passes, transcripts."""
