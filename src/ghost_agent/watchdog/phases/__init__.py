"""One module per implemented watchdog phase; rows without one run as `NotBuiltPhase` (see `watchdog/table.py`)."""
