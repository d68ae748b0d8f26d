"""The agent turn (DESIGN §4): one typed `Turn` through an ordered pipeline of stages.

The core, here: `turn` (the request's journey) and `turn_state` (the typed facts the stages fill), `pipeline`
(stages, then finishers once the reply is delivered), `services` (the live services the stages share),
`strategy` (what a strategy is given and reports), `recent` (answered turns, for the correction check) and
`verifier` (the tool-using turn's fact check, which retracts lessons it refutes). Then its parts:

- `stages/`: the pipeline in order — prepare, correction, memory_bus, routing, respond (fast path, the agent's
  strategies, `n > 1` choices), record, learn, reflection_scheduler;
- `checking/`: answer checking for the answer-first strategy — code run against the request's examples,
  numbers computed, the requested form, the user's stated preferences;
- `tool_loop/`: the tool loop strategy — its JSON action protocol, prompts and loop over MCTS;
- `compat/`: OpenAI-compatibility adapters — client tools as native `tool_calls`, structured output,
  streaming an agent turn, the notes-echo filter.

Arrows inside: stages → {checking, tool_loop, compat} → the core modules; nothing here imports `server/`.
"""
