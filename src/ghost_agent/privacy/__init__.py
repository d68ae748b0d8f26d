"""Privacy: secrets and personal data never touch disk.

`redact` is the one redactor (trajectories, log lines, lessons, URLs with credentials); `redact_rules` holds its
text rules and `redact_vendors` the vendor token formats, as data. Every layer may import this package; it
imports no other ghost_agent package.
"""
