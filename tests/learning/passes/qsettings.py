"""Settings for qcluster subprocesses in the process tests: a cluster name of the test's own."""

import os

from crewlet.settings import *  # noqa: F403
from crewlet.settings import Q_CLUSTER

Q_CLUSTER = {**Q_CLUSTER, "name": os.environ.get("CREWLET_Q_NAME", Q_CLUSTER["name"]), "poll": 0.2}
