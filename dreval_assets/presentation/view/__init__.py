"""`dreval view`: the results as web pages, from the leaderboard down to each claim and its evidence.

Pages are rendered from autoescaped Jinja2 templates over the published copy (`results.duckdb`,
read-only, so the view never blocks a run); `server.py` serves them on loopback, `export.py` writes
the same pages as static files. No page loads anything from the network and none runs a script.
"""
