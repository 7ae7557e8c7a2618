"""Text analysis: it takes text and returns findings, and knows nothing of memory folders.

Relative dates (dates.py, datetext.py), near-duplicates and possible contradictions (similarity.py),
secrets, personal data and injected instructions (sensitive.py), and the one boundary for text
leaving memdir (outward.py). A leaf: it imports nothing of memdir outside this package
(tests/test_layout.py holds it to that), so it is tested on text alone.
"""
