from ninja import Path, Router, Schema

from crewlet.auth import require_seat, seat_auth
from crewlet.errors import error_responses

router = Router(tags=["org"])


class WhoAmIOut(Schema):
    handle: str
    role: str | None
    unit: str | None
    company: str


@router.get("/agents/{handle}/whoami", auth=seat_auth, response={200: WhoAmIOut, **error_responses(401, 403, 404, 422)})
def whoami(request, handle: str = Path(..., pattern=r"^[-a-zA-Z0-9_]+$", max_length=100)):
    """The seat a token acts as (its role, unit and company): a runtime's check that its token is wired."""
    seat = require_seat(request, handle)
    return WhoAmIOut(
        handle=seat.handle,
        role=seat.role.name if seat.role else None,
        unit=seat.unit.key if seat.unit else None,
        company=seat.company.name,
    )
