"""What people read: the leaderboard's tables and plots, and the results view."""
