"""Self-play per cluster, as `ghost-agent selfplay stats` and the status page show it: attempts and passes from the
frontier file, the recent pass rate, the difficulty reached, saturation, and the frontier picker's weight."""

from __future__ import annotations

from ghost_agent.home import GhostHome
from ghost_agent.jsonsafe import JSON
from ghost_agent.prm.scorer import PRMScorer
from ghost_agent.selfplay.frontier import FrontierTracker, cluster_evidence, engaged
from ghost_agent.selfplay.frontier_selection import cluster_weights, compute_cluster_uncertainty
from ghost_agent.selfplay.templates import by_cluster
from ghost_agent.settings import Settings
from ghost_agent.trajectories.collector import TrajectoryCollector


def cluster_stats(home: GhostHome, settings: Settings) -> list[JSON]:
    """Per cluster with templates: attempts, passes, rates, difficulty, saturation, frontier weight (None while
    the frontier picker is off or not engaged). Reads the frontier file and scans the trajectories: blocking."""
    tracker = FrontierTracker(home.frontier)
    templates = by_cluster()
    collector = TrajectoryCollector(home.trajectories)
    scorer = PRMScorer.from_setting(home.prm_checkpoint if home.prm_checkpoint.exists() else None)
    counts, pairs = cluster_evidence(collector.iter_trajectories(), templates)
    saturated = tracker.list_saturated_clusters()
    weights = cluster_weights(templates, compute_cluster_uncertainty(scorer, pairs, templates), counts, saturated)
    frontier_on = settings.learning.frontier_selfplay and engaged(scorer, collector)
    outcomes = tracker.outcomes()
    rows = []
    for cluster in templates:
        passes, attempts = outcomes.get(cluster, (0, 0))
        recent = tracker.recent(cluster)
        rows.append({
            "cluster": cluster, "templates": len(templates[cluster]), "attempts": attempts, "passes": passes,
            "pass_rate": round(passes / attempts, 3) if attempts else None,
            "recent_pass_rate": round(sum(recent) / len(recent), 3) if recent else None,
            "difficulty": tracker.difficulty_for(cluster), "saturated": cluster in saturated,
            "trajectories": counts.get(cluster, 0),
            "weight": round(weights[cluster], 4) if frontier_on else None,
        })
    collector.close()
    return rows


__all__ = ["cluster_stats"]
