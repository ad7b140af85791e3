"""What an agent is shown: context under a budget, the link graph, Claude Code's recall hooks."""
