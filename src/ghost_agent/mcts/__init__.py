"""MCTS over candidate actions: LLM proposals scored by the PRM (fast path) or by LLM simulation.

`from ghost_agent.mcts import MCTSReasoner` is the entry point; see `reasoner.py` for the algorithm,
`parse.py` for the lenient reading of model output and `prompts.py` for the prompt data files.
"""

from __future__ import annotations

from ghost_agent.mcts.parse import ToolSpec
from ghost_agent.mcts.reasoner import MCTSReasoner
from ghost_agent.mcts.result import CandidateRecord, MCTSError, MCTSResult, Provenance
from ghost_agent.prm.features import ActionCandidate, PlanState

__all__ = [
    "ActionCandidate",
    "CandidateRecord",
    "MCTSError",
    "MCTSReasoner",
    "MCTSResult",
    "PlanState",
    "Provenance",
    "ToolSpec",
]
