"""Code location for `dagster dev` (workspace.yaml points here). Settings come from the environment."""
from dreval_assets.defs import build_definitions

defs = build_definitions()
