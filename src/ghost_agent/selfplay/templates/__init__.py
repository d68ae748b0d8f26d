"""Every task template, by cluster. A cluster's module lists its templates in `TEMPLATES`; each one passes
`selfplay.admission.admit` (reference passes, bad replies fail, verdicts repeat), which the tests prove."""

from __future__ import annotations

from ghost_agent.selfplay.task import Template
from ghost_agent.selfplay.templates import (
    algo_lists,
    algo_text,
    bash,
    concurrency,
    concurrency_async,
    data_analysis,
    python_general,
    python_general_classes,
    regex_parse,
    sql,
    sql_grouping,
    web_pages,
    web_sites,
)

_MODULES = (
    algo_lists, algo_text, bash, concurrency, concurrency_async, data_analysis, python_general,
    python_general_classes, regex_parse, sql, sql_grouping, web_pages, web_sites,
)

TEMPLATES: tuple[Template, ...] = tuple(t for module in _MODULES for t in module.TEMPLATES)


def by_cluster() -> dict[str, list[Template]]:
    """Templates grouped by cluster, in registry order."""
    out: dict[str, list[Template]] = {}
    for template in TEMPLATES:
        out.setdefault(template.cluster, []).append(template)
    return out


def find(cluster: str, name: str) -> Template:
    """The template `cluster/name`; KeyError when there is none."""
    for template in TEMPLATES:
        if template.cluster == cluster and template.name == name:
            return template
    raise KeyError(f"no template {cluster}/{name}")


__all__ = ["TEMPLATES", "by_cluster", "find"]
