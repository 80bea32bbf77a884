//! Python built-ins that the reference relies on: `str.strip`, `int()`, `float()`, `json.loads`.
