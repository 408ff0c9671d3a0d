import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "crewlet.settings")
application = get_wsgi_application()

# An invalid config file stops the server here, naming the key paths, before it answers anything.
from crewlet.config import runtime  # noqa: E402

if problem := runtime.file_problem():
    raise runtime.ConfigUnusable(problem)

# Load the embedder now, so the first turn after a start has its vector; an embed that arrives
# meanwhile waits for this load rather than spending its budget on it.
from core.providers.embeddings import warm  # noqa: E402

warm.start()

# Import the URLconf (every app's router) now rather than on a worker's first request, which would
# otherwise wait about a second for it.
from django.urls import get_resolver  # noqa: E402

get_resolver().url_patterns  # noqa: B018
