"""Typed errors the API maps to HTTP answers in one place (``crewlet.api``)."""


class CrewletError(Exception):
    status = 400

    def __init__(self, message: str, **extra):
        super().__init__(message)
        self.message = message
        self.extra = extra


class BadInput(CrewletError):
    status = 422


class NotFound(CrewletError):
    status = 404


class Forbidden(CrewletError):
    status = 403


class Conflict(CrewletError):
    status = 409
