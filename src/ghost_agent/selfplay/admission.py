"""The admission rule for templates (seed 001; as the best self-play systems do): a template may set tasks only
when, for every difficulty over sample seeds, its reference reply passes its check, every known-bad reply fails
it, and the check gives the same verdict twice. A template that breaks the rule would teach the agent noise."""

from __future__ import annotations

from dataclasses import dataclass, field

from ghost_agent.sandbox.base import SandboxBackend
from ghost_agent.selfplay.checks import CheckEnv, validate
from ghost_agent.selfplay.task import DIFFICULTIES, Task, Template, generate


@dataclass
class Admission:
    """The verdict on one template: admitted, or the problems found (one line per task and reply)."""

    cluster: str
    template: str
    tasks: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def admitted(self) -> bool:
        """True when every sampled task behaved."""
        return self.tasks > 0 and not self.problems


def check_task(task: Task, sandbox: SandboxBackend) -> list[str]:
    """What is wrong with one task: a reference that fails, a bad reply that passes, a verdict that changes."""
    problems = []
    env = CheckEnv(sandbox=sandbox, files=task.files)
    if not task.bad:
        problems.append(f"{task.id}: no known-bad reply")
    for label, reply, want in [("reference", task.reference, True)] + [
        (f"bad[{i}]", bad, False) for i, bad in enumerate(task.bad)
    ]:
        first = validate(task.check, reply, env)
        second = validate(task.check, reply, env)
        if first.success != second.success or first.failure_class != second.failure_class:
            problems.append(f"{task.id} {label}: verdict changed between runs ({first.failure_class.value} then "
                            f"{second.failure_class.value})")
        elif first.success != want:
            detail = first.auxiliary.get("detail", first.auxiliary.get("error", ""))
            problems.append(f"{task.id} {label}: {'failed' if want else 'passed'} ({first.failure_class.value}: "
                            f"{detail})")
    return problems


def admit(template: Template, sandbox: SandboxBackend, seeds: tuple[int, ...] = (0, 1)) -> Admission:
    """Generate the template's tasks for `seeds` at every difficulty and check each (blocking: the checks run
    code in the sandbox)."""
    verdict = Admission(template.cluster, template.name)
    for difficulty in DIFFICULTIES:
        for seed in seeds:
            try:
                task = generate(template, seed, difficulty)
            except Exception as exc:  # a template bug: report it with the others
                verdict.problems.append(f"{template.cluster}/{template.name} d{difficulty} seed {seed}: {exc!r}")
                continue
            verdict.tasks += 1
            verdict.problems += check_task(task, sandbox)
    return verdict


__all__ = ["Admission", "admit", "check_task"]
