"""dreval: evaluate deep-research systems on partitioned Dagster assets stored in DuckDB."""
