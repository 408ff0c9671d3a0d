"""A process refuses to start on an invalid config file (``manage.py`` commands run this check first)."""

from django.core import checks


@checks.register("crewlet_config")
def config_file_is_valid(app_configs=None, **kwargs):
    from crewlet.config import runtime

    problem = runtime.file_problem()
    if not problem:
        return []
    return [checks.Error(problem, hint="Fix the file (CREWLET_CONFIG); the service never serves the defaults "
                                       "in its place.", id="crewlet.E001")]
