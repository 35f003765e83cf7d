"""One pending scheduler re-evaluation in Snakemake's main process.

Snakemake 9's scheduler re-arms a timer (the --max-jobs-per-timespan
limiter's timespan, 1 s by default) at the end of every scheduling round
that leaves jobs waiting, and every finished job starts a round of its own.
The timers never merge: each finished job adds one more timer that fires,
starts a round and re-arms itself, so with hundreds of sweep points waiting
for two cores the rounds per second grow with the jobs finished (135 live
timer threads after 60 points; Snakemake's process took 510 CPU-s of a
31-minute quick reproduction; docs/benchmarks.md, "Snakemake's re-evaluation
timers"). The limiter needs only one pending re-evaluation: when it fires,
a round runs and re-arms it if jobs still wait. The workflow installs this
(workflows/common.smk); tests/test_snakemake_timers.py holds it to that.
"""

from __future__ import annotations

import threading
from typing import Any

METHOD = "_schedule_reevalutation"  # Snakemake's spelling


def reevaluate_once(scheduler: Any, delay: float) -> None:
    """Release the scheduler's semaphore after `delay` unless a release is pending."""
    pending = getattr(scheduler, "_qlab_reevaluation", None)
    if pending is not None and pending.is_alive():
        return
    timer = threading.Timer(delay, scheduler._open_jobs.release)
    timer.daemon = True  # a pending re-evaluation does not hold the process at exit
    scheduler._qlab_reevaluation = timer
    timer.start()


def install(scheduler_class: type) -> None:
    """Replace the class's re-evaluation (a no-op if Snakemake no longer has it:
    the test fails then, so the workflow does not silently lose the fix)."""
    if hasattr(scheduler_class, METHOD):
        setattr(scheduler_class, METHOD, reevaluate_once)
