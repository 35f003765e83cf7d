"""qlab: reproducible experiments for queue disciplines."""

__version__ = "0.1.0"

# Scenario profiles: quick (a laptop), paper (the published scale), test (CI).
PROFILES = ("quick", "paper", "test")
