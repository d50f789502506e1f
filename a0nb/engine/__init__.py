"""The engine: Agent, the loop, model calls, history and compaction, tools and the tool runner, jobs, turns,
call records and composition. May import `a0nb.files`, `a0nb.providers` and the ground modules; never the
inspector or the notebook layer."""
