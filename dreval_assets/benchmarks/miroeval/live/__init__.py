"""MiroEval's refresh from the live web: queries generated from recent headlines, filtered and selected
as the paper does (`refresh.py` is its `Benchmark.live`)."""
