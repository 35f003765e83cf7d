"""The groups `make test` runs pytest's workers by (tests/conftest.py)."""

from __future__ import annotations

from .conftest import xdist_group


def test_tests_that_share_the_checkouts_lock_or_the_host_are_grouped():
    assert xdist_group("tests/test_e2e.py::test_every_job_ran_and_passes_the_trace_validator") == "workflow"
    assert xdist_group("tests/test_resume.py::test_stale_snakemake_lock_is_cleared") == "workflow"
    # test_mininet.py test by test: its workflow tests run in a checkout of
    # their own (own_checkout), with the Mininet runs, as the others do
    assert xdist_group("tests/test_mininet.py::test_snakemake_ansible_mininet_end_to_end") == "host"
    assert xdist_group("tests/test_bench.py::test_bench_places_a_discipline_in_emulation") == "host"
    # the rest of test_bench.py runs the workflow in this checkout
    adaptive = "tests/test_bench.py::test_bench_places_a_discipline_with_adaptive_repetition"
    assert xdist_group(adaptive) == "workflow"
    kill = "tests/test_mininet.py::test_kill_mid_run_leaves_nothing_and_next_run_succeeds"
    assert xdist_group(kill) == "host"
    # test_hostile.py test by test too: it names `make reproduce` in docstrings only
    assert xdist_group("tests/test_hostile.py::test_fuzz_scenarios") is None
    stamp = "tests/test_hostile.py::test_validate_stamp_skips_only_what_did_not_change"
    assert xdist_group(stamp) == "workflow"
    assert xdist_group("tests/test_roles.py::test_prepare_host_passes_check_mode_and_is_idempotent") == "host"
    assert xdist_group("tests/test_scenario.py::test_every_repo_scenario_is_valid_and_expands") is None
    assert xdist_group("tests/test_queueing.py::test_ns3_mm1k_blocking_meets_the_closed_form[k5]") is None
