"""What every live refresh shares: its settings (`config`), what it reports (`summary`) and the dispatch
to the benchmark that refreshes (`refresh`: the schedules, the API and its pace). Each benchmark's own
refresh lives in its folder's `live/`, declared by its `Benchmark.live`."""
