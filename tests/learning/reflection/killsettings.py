"""Settings for the kill -9 test's qcluster: the queue's and the sweep's clocks scaled down together."""

from tests.learning.passes.qsettings import *  # noqa: F403
from tests.learning.passes.qsettings import Q_CLUSTER

Q_CLUSTER = {**Q_CLUSTER, "timeout": 20, "retry": 25}
CREWLET_REFLECT_STALL_SECONDS = 4
CREWLET_REFLECT_WAIT_SECONDS = 10
