"""The user-correction detector: `detector.classify_user_correction` is the entry point.

`cues` (lexical cues) and `score` (how they combine) read the follow-up alone; `exchange` tokenises the prior
request and reply once, and `contradiction`, `values`, `relations`, `pushback`, `form` and `tone` read the
follow-up against them.
"""
