"""The offline answers' heuristics: deterministic, no model and no network."""
