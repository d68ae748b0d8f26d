"""The learned-model core the router and the PRM share (DESIGN §6).

- `linear`: the one numpy logistic-regression core and its checkpoint format;
- `bound_model`: that core bound to one kind and one frozen feature layout;
- `training`: label provenance weights, data floors, the report; `trainer`: trajectories → samples → fit →
  atomic checkpoint, for any bound model;
- `live_model`: the hot-swappable slot the scorer and the router are built on; `holdout`: the swap gate;
- `retrain`: one retrain pass over the store; `job_worker`: the child process a watchdog phase runs it in.
"""
