from ninja import Router, Schema

from crewlet.auth import require_seat, seat_auth

router = Router(tags=["org"])


class WhoAmIOut(Schema):
    handle: str
    role: str | None
    unit: str | None
    company: str


@router.get("/agents/{handle}/whoami", auth=seat_auth, response=WhoAmIOut)
def whoami(request, handle: str):
    """The seat a token acts as (its role, unit and company): a runtime's check that its token is wired."""
    seat = require_seat(request, handle)
    return WhoAmIOut(
        handle=seat.handle,
        role=seat.role.name if seat.role else None,
        unit=seat.unit.key if seat.unit else None,
        company=seat.company.name,
    )
