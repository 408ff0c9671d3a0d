"""What every API input schema is: a closed JSON object validated field by field, strictly, never coerced.

ninja's ``Schema`` reads attributes off whatever it is given (to serialise ORM rows), so as an input
it turns a JSON list or scalar into an object of defaults and answers 200 to a body the published
schema forbids; and pydantic's lax mode takes ``0`` for ``false``. Input schemas derive from this
strict plain pydantic model instead. A timestamp, which JSON carries as a string, is declared
``Field(strict=False)``. A field the schema does not declare is refused by name (``seat`` in a
prefetch body would otherwise be ignored while the token's own seat acts).
"""

from pydantic import BaseModel, ConfigDict


class InputSchema(BaseModel):
    """An API input body: a JSON object of the declared fields only, each validated strictly."""

    model_config = ConfigDict(strict=True, extra="forbid")
