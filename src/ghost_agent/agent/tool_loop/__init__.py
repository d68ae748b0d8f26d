"""The tool loop strategy (workspace-file requests, larger upstreams): `loop` (ToolLoop over MCTS candidates or
single-shot), `protocol` (the JSON action protocol, read leniently), `prompting` (its conversation)."""
