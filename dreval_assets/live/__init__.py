"""Live task refresh: tasks generated or collected from the current web (news-driven queries, new articles)."""
