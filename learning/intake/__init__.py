"""The turn record and ``POST /turns``: a turn stored once per run id, its reflection enqueued."""
