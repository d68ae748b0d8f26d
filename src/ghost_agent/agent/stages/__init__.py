"""The turn's pipeline stages, in the order `server/app.py` assembles them: `prepare` (context, request,
backend call, reply model), `correction` (did the user just correct the prior reply?), `memory_bus` (lessons
shown), `routing` (fast path or agent), `respond` (the reply: fast path, a strategy, or `choices` for `n > 1`),
then the finishers after delivery: `record` (the trajectory), `learn` (a lesson from a recovery) and
`reflection_scheduler` (a correction's reflection)."""
