"""Outcome labelling: what says whether a turn went well when no validator ran.

- `correction`: the user-correction detector (is the user's next message a correction of the reply?);
- `outcome_heuristics`: promote a stuck chat turn from UNKNOWN to FAILED;
- `self_consistency`: vote over sampled answers and turn the vote into labels.
"""
