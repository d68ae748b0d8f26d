"""The `ghost-agent` command line: one module per command.

`main` builds the parser and runs `serve`, `logs`, `doctor` and `config`; each other command registers itself
with `add_subparser(sub)`: `trajectories`, `lessons`, `skills`, `prm` and `router` (sharing `models`), `sandbox`,
`eval` (with `eval_transfer`), `status`. `args` holds the argument types and the `--home`/`--config` parent
parser they share. Commands may import any package; nothing imports `cli/` but `__main__`.
"""
