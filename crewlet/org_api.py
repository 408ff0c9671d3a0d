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
    seat = require_seat(request, handle)
    return WhoAmIOut(
        handle=seat.handle,
        role=seat.role.name if seat.role else None,
        unit=seat.unit.key if seat.unit else None,
        company=seat.company.name,
    )
