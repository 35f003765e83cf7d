"""The job description the ns-3 runner's tests and benchmarks share: a
10 Mb/s dumbbell (1 ms access links, 10 ms bottleneck) and the ncq-conf TCP
settings, with the caller's discipline, flows and run options (docs/jobs.md).

    import testjob; json.dump(testjob.job("droptail", {"limit_pkts": "100"}, flows), f)
"""

from __future__ import annotations

from typing import Any


def job(disc: str, params: dict[str, str], flows: list[dict[str, Any]], *, seed: int = 3,
        duration_s: float = 60.0, stop_when_done: bool = True, window_scaling: bool = False,
        packets: bool = False, scenario: str = "test/ns3") -> dict[str, Any]:
    paper = scenario.split("/")[0]
    return {
        "schema": "qlab-job/1", "scenario": scenario, "paper": paper, "backend": "ns3",
        "series": disc, "point": "p", "point_values": {}, "seed": seed,
        "duration_s": duration_s, "stop_when_done": stop_when_done,
        "topology": {"kind": "dumbbell", "access_rate_bps": 10000000, "access_delay_s": 0.001,
                     "bottleneck_rate_bps": 10000000, "bottleneck_delay_s": 0.010},
        "tcp": {"variant": "NewReno", "sack": False, "timestamps": False,
                "window_scaling": window_scaling, "initial_cwnd_segments": 2,
                "delayed_ack_count": 1, "min_rto_s": 0.2, "syn_timeout_s": 1.0,
                "rcv_buf_bytes": 131072, "snd_buf_bytes": 131072},
        "discipline": {"kind": disc, "params": params},
        "flows": flows,
        "trace": {"queue_sample_interval_s": 0.1, "packets": packets},
    }


def ncq_conf_flows(n: int, small: int, rng) -> list[dict[str, Any]]:
    """The ncq-conf shapes: `small` flows of 100-byte segments (10 kB), the
    rest 1000-byte segments (200 kB), starts uniform in [0, 1 s)."""
    return [{"flow_id": i, "app": "bulk", "group": "noncongestive" if i < small else "congestive",
             "cls": 0, "prec": 0, "seg_bytes": 100 if i < small else 1000,
             "bytes": 10000 if i < small else 200000, "start_s": round(rng.random(), 9)}
            for i in range(n)]
