"""The JSON Schema of crewlet.toml (draft 2020-12), published for editors (taplo, Even Better TOML).

Made from the same pydantic tables the parser validates with, so its ranges, allowed values and
descriptions are the service's own. What spans tables is checked by the service only: references
between tables, a role's overrides merged over the defaults, the local embedder's 600-character
bound and ``duplicate_jaccard_threshold`` not below ``cluster_jaccard_threshold``.
"""

from __future__ import annotations

from pydantic import TypeAdapter

from crewlet.config import schema

DIALECT = "https://json-schema.org/draft/2020-12/schema"


def config_schema() -> dict:
    document = TypeAdapter(schema.Config).json_schema()
    role = document["$defs"]["RoleSpec"]["properties"]
    # a role's overrides are a partial [learning] / [skills]: every key of those tables has a default
    for key, table in (("learning", "Learning"), ("skills", "Skills")):
        role[key] = {"$ref": f"#/$defs/{table}", "description": role[key]["description"]}
    return {
        "$schema": DIALECT,
        "title": "crewlet.toml",
        "description": "Crewlet's configuration: company, providers, learning knobs and the organisation.",
        **{key: value for key, value in document.items() if key != "title"},
    }
