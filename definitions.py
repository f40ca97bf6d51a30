"""Code location for `dagster dev` (workspace.yaml points here). Settings come from the environment and
the home (found like the CLI's: DREVAL_HOME, else the nearest `.dreval`); an environment naming another
judge than the home's is refused here, as `dreval run` refuses it (`dreval judge set` switches)."""
from dreval_assets.config import Settings
from dreval_assets.defs import build_definitions

settings = Settings.from_env()
settings.check_judge_is_the_homes()
defs = build_definitions(settings)
