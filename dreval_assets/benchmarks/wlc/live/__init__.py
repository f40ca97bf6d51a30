"""Wiki Live's refresh from the live web: Good Articles created inside a contamination window, their
gold statements, and new versions of edited ones (`refresh.py` is its `Benchmark.live`)."""
