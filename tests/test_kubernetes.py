"""workflows/profiles/kubernetes without a cluster: Snakemake runs the
workflow with snakemake-executor-plugin-kubernetes, whose Kubernetes API
calls are replaced (tests/k8s_capture.py) so that the Job it would create is
written to a file instead, and checked: the image, the resources the profile
asks for, the grouped simulations and the storage the pods would use.

What is not tested here (README, "Running on a cluster"): a real cluster
scheduling the pods, the pods' image running the jobs, the storage between
the submitting host and the pods, and the status checks.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from qlab import paths

from .conftest import REPO, needs

PROFILES = REPO / "workflows" / "profiles"
IMAGE = "registry.example/qlab-ns3:test"


def test_the_cluster_profiles_ask_for_the_same_resources_and_grouping():
    """One set of per-rule resources, measured once (docs/benchmarks.md):
    the Kubernetes profile repeats the SLURM profile's."""
    slurm, k8s = (yaml.safe_load((PROFILES / p / "config.yaml").read_text()) for p in ("slurm", "kubernetes"))
    for key in ("cores", "resources", "group-components", "set-resources", "default-resources"):
        assert k8s[key] == slurm[key], key
    assert slurm["executor"] == "slurm" and k8s["executor"] == "kubernetes"
    # and the local profile's settings (the scheduler, what reruns a job, plans in threads),
    # but for its one machine-wide limit: one real-time job at a time (a cluster runs none)
    local = yaml.safe_load((PROFILES / "local" / "config.yaml").read_text())
    assert local.pop("resources") == ["realtime=1"]
    for key, value in local.items():
        assert slurm.get(key) == value and k8s.get(key) == value, key
    # every rule given resources exists, and none of them is a local rule
    rules = subprocess.run(
        [str(Path(sys.executable).parent / "snakemake"), "--list-rules"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout.split()
    assert set(slurm["set-resources"]) <= set(rules)
    assert {g.split("=")[0] for g in slurm["group-components"]} == {"simulate"}


@needs(paths.NS3_RUNNER)
@needs(paths.QCORE_REPLAY)
def test_the_kubernetes_job_of_a_group_of_simulations(tmp_path):
    scen = tmp_path / "scenarios" / "ncq-conf"
    scen.mkdir(parents=True)
    for name in ("defaults.yaml", "flows.yaml"):
        shutil.copy(REPO / "scenarios" / "ncq-conf" / name, scen / name)
    # the storage the pods share holds the checkout's files the jobs read
    # (here: links to them), as a user's volume would hold a copy
    store = tmp_path / "store"
    store.mkdir()
    for name in ("disciplines", "build", "analysis", "reports", "scenarios"):
        (store / name).symlink_to(REPO / name)
    capture = tmp_path / "job.json"
    results = tmp_path / "results"
    cmd = [
        sys.executable,
        str(REPO / "tests" / "k8s_capture.py"),
        "--workflow-profile",
        "workflows/profiles/kubernetes",
        "--container-image",
        IMAGE,
        "--default-storage-prefix",
        str(store),
        "--kubernetes-persistent-volumes",
        f"qlab-data:{store}",
        "--quiet",
        "rules",
        "host",
        "--config",
        "profile=test",
        f"results={results}",
        f"scenarios={json.dumps([str(scen / 'flows.yaml')])}",
        "--",
        str(results / "ncq-conf/flows/ns3/flows.csv.gz"),
    ]
    proc = subprocess.run(
        cmd,
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
        env=dict(os.environ, QLAB_K8S_CAPTURE=str(capture), TZ="UTC"),
    )
    assert capture.exists(), (
        f"no Job created (exit {proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}"
    )
    job = json.loads(capture.read_text())
    assert job["namespace"] == "default"
    spec = job["job"]["spec"]["template"]["spec"]
    (container,) = spec["containers"]
    assert container["image"] == IMAGE
    assert spec["restartPolicy"] == "Never" and job["job"]["spec"]["backoffLimit"] == 0
    # the profile's grouping: the sweep's 4 points (8 simulations: each
    # point's 2 seeds in one job) in one pod (up to 10 points per pod), a
    # core (requested as 95% of it) and 500 MB each
    requests = container["resources"]["requests"]
    assert (requests["cpu"], requests["memory"]) == ("3800m", "2000M")
    command = container["args"][-1]
    assert command.count("'simulate:paper=ncq-conf,name=flows,backend=ns3,") == 4
    assert "--allowed-rules simulate " in command and " --cores 8 " in command
    # no shared filesystem: the sources and every file through the storage on the volume
    assert "--shared-fs-usage 'none'" in command
    assert "--default-storage-provider 'fs'" in command and f"--default-storage-prefix '{store}'" in command
    assert {"name": "qlab-data", "persistentVolumeClaim": {"claimName": "qlab-data"}} in spec["volumes"]
    assert {"name": "qlab-data", "mountPath": str(store)} in container["volumeMounts"]
    # the pod keeps its image's PATH (this host's would name a venv the pod has not)
    assert "PATH" not in {e["name"] for e in container.get("env") or []}
