"""The page people read and correct their memory in (served by `memdir serve --http`)."""
