"""Server-rendered pages (memory tab, dashboard). Each app's page urls are included here."""

import importlib

from django.urls import include, path

urlpatterns = []
for module in ("learning.pages.urls", "knowledge.page_urls"):
    try:
        importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name != module:
            raise
        continue
    urlpatterns.append(path("", include(module)))
