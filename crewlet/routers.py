"""Every router the API mounts, by prefix. Each app adds one line here for its router."""

import importlib

_ROUTERS = [
    ("/", "crewlet.org_api"),
]


def ROUTERS():
    for prefix, module in _ROUTERS:
        yield prefix, importlib.import_module(module).router
