"""The eval harness: suites of tasks with deterministic verifiers, runners (stub | http), rewards, the egress
guard, and baseline freeze/compare (DESIGN §7)."""
