"""Where things live in a qlab checkout (overridable with QLAB_ROOT)."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(os.environ.get("QLAB_ROOT", Path(__file__).resolve().parent.parent))
SCENARIOS = ROOT / "scenarios"
SCHEMA = SCENARIOS / "schema.json"
BUILD = ROOT / "build"
QCORE_REPLAY = Path(os.environ.get("QLAB_QCORE_REPLAY", BUILD / "core" / "qcore-replay"))
NS3_RUNNER = Path(os.environ.get("QLAB_NS3_RUNNER", BUILD / "ns3" / "qlab-ns3-run"))
REPORTS = ROOT / "reports"
