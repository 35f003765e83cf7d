"""qlab/snakemake_timers.py: Snakemake's scheduler keeps one pending
re-evaluation, however many rounds ask for one."""

from __future__ import annotations

import threading
import time

from snakemake.scheduling import job_scheduler

from qlab import snakemake_timers


class FakeScheduler:
    def __init__(self) -> None:
        self._open_jobs = threading.Semaphore(0)


def releases(sem: threading.Semaphore) -> int:
    n = 0
    while sem.acquire(blocking=False):
        n += 1
    return n


def test_snakemake_still_has_the_method_the_workflow_replaces():
    assert callable(getattr(job_scheduler.JobScheduler, snakemake_timers.METHOD, None))


def test_many_requests_make_one_pending_release():
    s = FakeScheduler()
    before = threading.active_count()
    for _ in range(50):
        snakemake_timers.reevaluate_once(s, 0.05)
    assert threading.active_count() <= before + 1
    time.sleep(0.3)
    assert releases(s._open_jobs) == 1
    # after it fired, the next request arms a new one
    snakemake_timers.reevaluate_once(s, 0.05)
    time.sleep(0.3)
    assert releases(s._open_jobs) == 1


def test_the_original_timers_pile_up_and_install_replaces_them():
    """What the fix is for: Snakemake's own method arms a timer per call."""

    class Scheduler(FakeScheduler):
        pass

    Scheduler._schedule_reevalutation = job_scheduler.JobScheduler._schedule_reevalutation
    s = Scheduler()
    for _ in range(5):
        s._schedule_reevalutation(0.05)
    time.sleep(0.3)
    assert releases(s._open_jobs) == 5
    snakemake_timers.install(Scheduler)
    for _ in range(5):
        s._schedule_reevalutation(0.05)
    time.sleep(0.3)
    assert releases(s._open_jobs) == 1
