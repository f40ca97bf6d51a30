"""The asset jobs: task inputs, per-report evaluation, the leaderboard (with the agreement figures and the
published copy of the results)."""
from __future__ import annotations

from dagster import AssetSelection, define_asset_job

from .assets import PER_REPORT_ASSETS, agreement, leaderboard, published_results, task_rubrics, tasks

tasks_job = define_asset_job("tasks_job", AssetSelection.assets(tasks, task_rubrics))
evaluate_job = define_asset_job("evaluate_job", AssetSelection.assets(*PER_REPORT_ASSETS))
leaderboard_job = define_asset_job("leaderboard_job", AssetSelection.assets(leaderboard, agreement, published_results))
# the published copy alone: due when a leaderboard step ended before its copy was written
publish_job = define_asset_job("publish_job", AssetSelection.assets(published_results))
