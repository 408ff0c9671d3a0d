"""Django's PostgreSQL backend with one change: a bulk insert is cut into statements of at most
65,535 parameters.

Settings bind parameters on the server (``server_side_binding``: a reflection pass costs about a fifth
less CPU). The protocol's Bind message counts its parameters in 16 bits, so a statement may carry at
most 65,535 of them; Django's PostgreSQL operations send a whole ``bulk_create`` as one statement
(client-side binding has no such limit), and an insert past it failed ("number of parameters must be
between 0 and 65535") -- e.g. a transcript folder's episodes, or a bench seeding 5,000 episodes at
once. ``bulk_batch_size`` now answers as SQLite's does, from ``max_query_params``.
"""

from __future__ import annotations

from django.db import models
from django.db.backends.postgresql import base, features, operations

MAX_QUERY_PARAMS = 2**16 - 1


class DatabaseFeatures(features.DatabaseFeatures):
    max_query_params = MAX_QUERY_PARAMS


class DatabaseOperations(operations.DatabaseOperations):
    def bulk_batch_size(self, fields, objs):
        # a composite primary key is several columns; the delete collector passes names, one column each
        columns = sum(len(f.fields) if isinstance(f, models.CompositePrimaryKey) else 1 for f in fields) or 1
        return max(1, min(len(objs), MAX_QUERY_PARAMS // columns))


class DatabaseWrapper(base.DatabaseWrapper):
    features_class = DatabaseFeatures
    ops_class = DatabaseOperations
