"""``manage.py qcluster``: django-q2's cluster, each of whose processes ends with its parent.

The same command and options as django-q2's (this one is found first: ``crewlet`` precedes
``django_q`` in ``INSTALLED_APPS``); the one difference is ``crewlet.queue_lifeline.arm`` before
the cluster starts.
"""

from __future__ import annotations

import os

from django.conf import settings
from django_q.cluster import Cluster
from django_q.management.commands import qcluster

from crewlet import queue_lifeline


class Command(qcluster.Command):
    help = "Starts a Django Q cluster whose sentinel stops when the main process dies, and its workers when it does."

    def handle(self, *args, **options):
        if not settings.SECRET_KEY:  # django-q2 signs every task with it
            raise RuntimeError("SECRET_KEY is not set")
        if options.get("cluster_name"):  # django-q2's --name: the cluster's (and broker's queue) name
            os.environ["Q_CLUSTER_NAME"] = options["cluster_name"]
        cluster = Cluster()
        queue_lifeline.arm(cluster)
        cluster.start()
        if options.get("run_once"):
            cluster.stop()
