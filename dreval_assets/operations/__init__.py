"""What a user does to a home besides running it: import releases, plan what is due, take the inbox,
verify published aggregates, mark the processes running jobs on it."""
