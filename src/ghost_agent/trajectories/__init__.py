"""The trajectory store: every turn recorded as one `ghost.trajectory.v1` line (DESIGN §2-3).

- `record`: the `Trajectory` record and its outcome/source vocabulary — the contract every learning loop reads;
- `collector`: append-only JSON lines per session per UTC day, redacted before anything touches disk;
- `appender`: crash-safe concurrent line appends with a durability policy;
- `corrections`: the corrections sidecar, outcome changes learned after a trajectory was written.
"""
