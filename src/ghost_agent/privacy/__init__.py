"""Privacy: secrets and personal data never touch disk.

`redact` is the one redactor (trajectories, log lines, lessons, URLs with credentials). Its text rules: what a
rule is (`rule`) and what replaces a match (`placeholders`); the rules by family (`rules_shapes`,
`rules_context`, `rules_http`, `rules_personal`), the vendor token formats as data (`redact_vendors`); the order
they run in and the pass that applies them (`redact_rules`). Every layer may import this package; it imports no
other ghost_agent package.
"""
