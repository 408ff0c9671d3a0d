"""The suite's settings: crewlet's, on a throwaway embedded PostgreSQL when ``DATABASE_URL`` is unset.

The server runs in a temporary folder for this pytest process and is removed when it exits; its URL
goes into the environment, so the processes a test starts (the queue, commands) use the same server.
A server that cannot start fails the run.
"""

import os

if not os.environ.get("DATABASE_URL"):
    from crewlet import embedded_db

    os.environ["DATABASE_URL"] = embedded_db.throwaway()[1]

from crewlet.settings import *  # noqa: E402,F403

SECURE_SSL_REDIRECT = False  # the test client and the suite's servers speak plain HTTP on loopback
