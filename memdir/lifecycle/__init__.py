"""Over time: pruning into .archive/, consolidation of near-duplicates, history and stats."""
