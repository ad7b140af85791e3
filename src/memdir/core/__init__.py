"""The library: the `Memdir` facade, its write planner, the catalog and MEMORY.md, limits, secrets, scopes."""
