"""What memdir keeps over time: capture, transcripts, summaries, the diary, consolidation, history, import, copy, reconcile, watch."""
