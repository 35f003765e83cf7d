"""Containerized builds and runs (issues 7 and 11): qlab's images and `runtime: docker`.

The first tests need no Docker engine (image tags, provenance comparison, how
the docker profile wires each backend's jobs to its image, from the backend
registry; what scripts/in-image gives a job). The rest build the base, ns-3
and emu images through the workflow's own rules, run a tiny ns-3 job inside
and compare its trace tables byte for byte with a native run of the same job,
and (as root) run a Mininet job in the emu image through the workflow and
kill one mid-way; they run only when a Docker engine answers and
QLAB_TEST_DOCKER=1 (tests/test_docker.sh sets it), since a cold build takes
minutes.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest

from qlab import backends, containers, paths, provenance
from qlab.backends.base import Backend

from .conftest import REPO, TIMING_ATTEMPTS, faithful, needs

SNAKEMAKE = Path(sys.executable).parent / "snakemake"
DOCKER_PROFILE = ["--workflow-profile", "workflows/profiles/docker"]


def docker_reachable() -> bool:
    try:
        return subprocess.run(["docker", "info"], capture_output=True, timeout=20).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


with_docker = pytest.mark.skipif(
    os.environ.get("QLAB_TEST_DOCKER") != "1" or not docker_reachable(),
    reason="needs a Docker engine and QLAB_TEST_DOCKER=1 (tests/test_docker.sh)",
)


# --- no engine needed --------------------------------------------------------


@pytest.fixture
def fake_root(tmp_path, monkeypatch):
    """A checkout with one image `toy` built FROM `base`."""
    (tmp_path / "containers" / "toy").mkdir(parents=True)
    (tmp_path / "containers" / "toy" / "Dockerfile").write_text("ARG BASE\nFROM ${BASE}\n")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.c").write_text("int a;\n")
    monkeypatch.setattr(paths, "ROOT", tmp_path)
    monkeypatch.setitem(
        containers.IMAGES, "toy", containers.Image("toy", "containers/toy/Dockerfile", files=("src/*.c",))
    )
    return tmp_path


def test_image_tag_is_a_hash_of_its_inputs(fake_root):
    first = containers.inputs_sha256("toy", "qlab/base:1", {})
    assert containers.inputs_sha256("toy", "qlab/base:1", {}) == first
    assert containers.input_files("toy") == ["containers/toy/Dockerfile", "src/a.c"]
    # a copied file, the recipe, the base and a build argument each change it
    (fake_root / "src" / "a.c").write_text("int a = 1;\n")
    second = containers.inputs_sha256("toy", "qlab/base:1", {})
    assert second != first
    (fake_root / "containers" / "toy" / "Dockerfile").write_text("ARG BASE\nFROM ${BASE}\nUSER 1\n")
    third = containers.inputs_sha256("toy", "qlab/base:1", {})
    assert third != second
    assert containers.inputs_sha256("toy", "qlab/base:2", {}) != third
    assert containers.inputs_sha256("toy", "qlab/base:1", {"QUARTO_DEB": "q.deb"}) != third
    # a new file matching a copied pattern is an input too
    (fake_root / "src" / "b.c").write_text("int b;\n")
    assert containers.inputs_sha256("toy", "qlab/base:1", {}) != third


def test_an_image_needs_its_base_stamp(fake_root, monkeypatch):
    monkeypatch.setattr(containers, "STAMPS", fake_root / "build" / "images")
    with pytest.raises(containers.ImageError, match="built FROM base"):
        containers.plan("toy")


def test_current_image_comes_from_the_environment_and_its_stamp(tmp_path, monkeypatch):
    monkeypatch.delenv("QLAB_IMAGE", raising=False)
    assert containers.current_image() is None
    stamp = tmp_path / "ns3.json"
    manifest = {"debian": {"libns3-dev": "3.37-2"}, "python": {}, "r": {}}
    stamp.write_text(
        json.dumps(
            {
                "name": "ns3",
                "tag": "qlab/ns3:abc",
                "id": "sha256:1",
                "manifest_sha256": "m",
                "manifest": manifest,
            }
        )
    )
    monkeypatch.setenv("QLAB_IMAGE", "ns3")
    monkeypatch.setenv("QLAB_IMAGE_TAG", "qlab/ns3:abc")
    monkeypatch.setenv("QLAB_IMAGE_ID", "sha256:1")
    monkeypatch.setenv("QLAB_IMAGE_STAMP", str(stamp))
    assert containers.current_image() == {
        "name": "ns3",
        "tag": "qlab/ns3:abc",
        "id": "sha256:1",
        "manifest_sha256": "m",
        "manifest": manifest,
    }
    # a stamp of another image (rebuilt since the job started) is not claimed
    monkeypatch.setenv("QLAB_IMAGE_ID", "sha256:2")
    assert "manifest" not in containers.current_image()


def test_provenance_lists_versions_that_changed():
    old = {
        "packages": {"libns3-dev": "3.37-1", "pandoc": "2.17"},
        "python_packages": {"snakemake": "9"},
        "images": [{"name": "ns3", "id": "sha256:1", "manifest": {"debian": {"gcc": "12.1"}}}],
    }
    new = {
        "packages": {"libns3-dev": "3.37-2", "pandoc": "2.17"},
        "python_packages": {"snakemake": "9"},
        "images": [{"name": "ns3", "id": "sha256:2", "manifest": {"debian": {"gcc": "12.2"}}}],
    }
    assert provenance.changes(old, old) == []
    assert provenance.changes(old, new) == [
        "debian libns3-dev: 3.37-1 -> 3.37-2",
        "image ns3: sha256:1 -> sha256:2",
        "image ns3: debian gcc: 12.1 -> 12.2",
    ]
    assert provenance.changes({"packages": {}}, {"packages": {"x": "1"}}) == ["debian x: absent -> 1"]


def test_a_rerun_of_provenance_warns_when_versions_changed(tmp_path, capsys):
    out = tmp_path / "provenance.json"
    provenance.write(out, [], "test")
    assert json.loads(out.read_text())["changes_since_previous"] == []
    last = out.with_name("provenance.last.json")
    doc = json.loads(last.read_text())
    doc["python_packages"]["snakemake"] = "0.0-old"
    last.write_text(json.dumps(doc))
    provenance.write(out, [], "test")
    changed = json.loads(out.read_text())["changes_since_previous"]
    assert any(c.startswith("python snakemake: 0.0-old -> ") for c in changed), changed
    assert "versions differ from the previous report's" in capsys.readouterr().err


def dry_run(
    tmp_path: Path, *extra: str, scenario: str = "scenarios/ncq-conf/flows.yaml", config: tuple[str, ...] = ()
) -> str:
    cmd = [
        str(SNAKEMAKE),
        *extra,
        "--dry-run",
        "--nolock",
        "--cores",
        "2",
        "--config",
        "profile=test",
        f"results={tmp_path / 'results'}",
        f"site={tmp_path / 'site'}",
        f"scenarios={json.dumps([scenario])}",
        *config,
    ]
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc.stdout + proc.stderr


def jobs_by_rule(out: str) -> dict[str, list[str]]:
    """The job descriptions of a dry run, by rule."""
    by_rule: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in out.splitlines():
        if m := re.match(r"^\s*(?:local)?rule (\w+):$", line):
            current = by_rule.setdefault(m.group(1), [])
            current.append("")
        elif current is not None:
            current[-1] += line + "\n"
    return by_rule


def test_docker_profile_runs_jobs_in_their_images(tmp_path):
    by_rule = jobs_by_rule(dry_run(tmp_path, *DOCKER_PROFILE))
    assert len(by_rule["simulate"]) == 4  # a job per sweep point (2 series x 2 points, 2 seeds each)
    for block in by_rule["simulate"]:
        assert "shell_exec=containers/ns3/shell" in block and "build/images/ns3.json" in block
    in_image = (("collect", "ns3"), ("analyze", "analysis"), ("page", "analysis"), ("report", "analysis"))
    for rule, image in in_image:
        assert by_rule[rule] and all(f"shell_exec=containers/{image}/shell" in b for b in by_rule[rule]), rule
    for rule in ("provenance", "software"):  # they ask git and the image stamps, on the host
        assert by_rule[rule] and all("shell_exec" not in b for b in by_rule[rule]), rule
    # the runner comes from the image, not from a native build
    assert "build_ns3" not in by_rule


def test_each_backends_jobs_run_in_the_backends_image(tmp_path):
    """simulate and collect of each backend in its image (Backend.image),
    the real-time backend's one at a time; the images come first."""
    out = dry_run(
        tmp_path,
        *DOCKER_PROFILE,
        scenario="scenarios/ncq-conf/emu.yaml",
        config=('backends=["ns3", "mininet"]',),
    )
    by_rule = jobs_by_rule(out)
    assert len(by_rule["simulate"]) == 4 and len(by_rule["collect"]) == 2
    for rule in ("simulate", "collect"):
        for block in by_rule[rule]:
            backend = re.search(rf"/emu/({'|'.join(backends.names())})/", block).group(1)
            image = backends.get(backend).image
            assert f"shell_exec=containers/{image}/shell" in block, block
            assert f"build/images/{image}.json" in block, block
            if rule == "simulate":
                # one real-time job at a time, a core left for a simulation beside it
                assert ("realtime=1" in block) == backends.get(backend).realtime, block
                # and it starts first, beside the simulations rather than after them;
                # every run before what reads the runs (workflows/common.smk, run_priority)
                want = "priority: 10" if backends.get(backend).realtime else "priority: 1\n"
                assert want in block, block
                assert "threads: 2" not in block, block
    for rule in ("collect", "analyze", "page", "report"):
        assert by_rule[rule] and all("priority:" not in b for b in by_rule[rule]), rule


def test_the_images_rule_builds_what_the_backends_need(tmp_path):
    def images(chosen: str) -> set[str]:
        cmd = [
            str(SNAKEMAKE),
            *DOCKER_PROFILE,
            "--dry-run",
            "--nolock",
            "--cores",
            "2",
            "--config",
            f"backends={chosen}",
            "--forceall",
            "--",
            "images",
        ]
        proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
        return set(re.findall(r"output: build/images/(\w+)\.json", proc.stdout))

    assert images('["mininet"]') == {"base", "emu", "analysis"}
    assert images('["ns3", "mininet"]') == {"base", "ns3", "emu", "analysis"}
    assert images('["ns3"]') == {"base", "ns3", "analysis"}


class _ToyBackend(Backend):
    name = "toy"
    image = "kmod"
    realtime = True
    docker_options = ("--cap-add", "NET_ADMIN")

    def tools(self):
        return {}

    def run(self, job_file, workdir, log):
        raise NotImplementedError


class _NoImageBackend(_ToyBackend):
    name = "noimage"
    image = None


def test_the_docker_runtime_takes_backends_and_images_from_the_registry(monkeypatch):
    monkeypatch.setitem(backends.BACKENDS, "toy", _ToyBackend)
    monkeypatch.setitem(backends.BACKENDS, "noimage", _NoImageBackend)
    assert "toy" in containers.docker_backends() and "noimage" not in containers.docker_backends()
    assert containers.images_for(["toy", "ns3"]) == ["kmod", "ns3", "analysis"]
    assert containers.run_settings("kmod") == {"options": ["--cap-add", "NET_ADMIN"], "realtime": True}
    assert containers.run_settings("ns3") == {"options": [], "realtime": False}
    with pytest.raises(containers.ImageError, match="the noimage backend has no image"):
        containers.images_for(["noimage"])
    # the emu image's jobs: root and Mininet's capabilities, not --privileged
    emu = containers.run_settings(backends.get("mininet").image)
    assert emu["realtime"] is True and "--privileged" not in emu["options"]
    assert emu["options"][:2] == ["--user", "0:0"]
    assert {"NET_ADMIN", "NET_RAW", "SYS_ADMIN", "SYS_NICE"} <= set(emu["options"])


def test_no_backend_is_named_in_the_docker_runtime():
    """Backend names come from the registry (qlab.backends), not from here
    (a backend named as its image, ns3, is found as the image's name)."""
    for rel in ("qlab/containers.py", "workflows/containers.smk", "scripts/in-image", "Makefile"):
        text = (REPO / rel).read_text()
        if rel == "Makefile":  # its docker branch (a test target may be named after a backend: test-testbed)
            text = text[text.index("ifeq ($(RUNTIME),docker)") : text.index("else ifneq ($(RUNTIME),native)")]
        for name in set(backends.names()) - set(containers.IMAGES):
            assert not re.search(rf"\b{name}\b", text), (rel, name)


def test_every_backend_image_has_a_shell():
    for name in containers.docker_backends():
        shell = REPO / containers.shell(containers.backend_image(name))
        assert os.access(shell, os.X_OK), shell
        assert f'in-image" {containers.backend_image(name)} ' in shell.read_text()


def _fake_in_image(tmp_path: Path, run: dict) -> list[str]:
    """scripts/in-image's `docker run` argv for an image whose stamp says `run`
    (a copy of the script in a fake checkout, a fake docker that prints it)."""
    root = tmp_path / "checkout"
    (root / "scripts").mkdir(parents=True)
    shutil.copy(REPO / "scripts" / "in-image", root / "scripts" / "in-image")
    (root / "build" / "images").mkdir(parents=True)
    (root / "build" / "images" / "toy.json").write_text(
        json.dumps({"name": "toy", "tag": "qlab/toy:1", "id": "sha256:toy", "run": run}, indent=1)
    )
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "docker").write_text('#!/bin/sh\nfor a in "$@"; do echo "$a"; done\n')
    (bin_dir / "docker").chmod(0o755)
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}", QLAB_IMAGE_MOUNTS="")
    proc = subprocess.run(
        [str(root / "scripts" / "in-image"), "toy", "true"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()


def test_in_image_gives_a_job_its_backends_options_after_its_own(tmp_path):
    argv = _fake_in_image(
        tmp_path, {"options": ["--user", "0:0", "--cap-add", "NET_ADMIN"], "realtime": False}
    )
    assert argv[:5] == ["run", "--rm", "--init", "--network", "none"]
    user = argv.index("-u")
    assert argv[user + 1] == f"{os.getuid()}:{os.getgid()}"
    # docker takes the last --user: the backend's
    assert user < argv.index("--user") < argv.index("sha256:toy")
    assert argv[argv.index("--cap-add") + 1] == "NET_ADMIN"
    assert argv[-2:] == ["sha256:toy", "true"] and "--cgroup-parent" not in argv
    # an image no backend adds options to runs as the caller, with nothing more
    plain = _fake_in_image(tmp_path / "plain", {"options": [], "realtime": False})
    assert "--user" not in plain and "--cap-add" not in plain


@pytest.mark.skipif(
    not Path("/sys/fs/cgroup/cpu/cpu.rt_runtime_us").exists() or os.geteuid() != 0,
    reason="needs root and a kernel with real-time group scheduling (cgroup v1)",
)
def test_in_image_gives_real_time_jobs_a_budget_where_the_kernel_groups_it(tmp_path):
    argv = _fake_in_image(tmp_path, {"options": [], "realtime": True})
    budget = argv[argv.index("--cpu-rt-runtime") + 1]
    assert argv[argv.index("--cgroup-parent") + 1] == "/qlab-rt"
    assert Path("/sys/fs/cgroup/cpu/qlab-rt/cpu.rt_runtime_us").read_text().strip() == budget


def test_native_profile_runs_nothing_in_images(tmp_path):
    out = dry_run(tmp_path, "--workflow-profile", "workflows/profiles/local")
    assert "shell_exec" not in out
    assert "build/images/" not in out


# --- with a Docker engine ----------------------------------------------------


@pytest.fixture(scope="module")
def images():
    """base and ns3 built by the workflow's rules (a no-op when their tags exist)."""
    cmd = [str(SNAKEMAKE), *DOCKER_PROFILE, "--cores", "2", "--quiet", "rules", "--", "build/images/ns3.json"]
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=3600)
    if proc.returncode != 0:
        logs = "\n".join(
            f"== {p}\n" + p.read_text(errors="replace")[-2000:]
            for p in (REPO / "logs" / "images").glob("[bn]*.log")
        )
        pytest.fail(f"image build failed:\n{proc.stderr[-2000:]}\n{logs}")
    return {n: json.loads(containers.stamp_path(n).read_text()) for n in ("base", "ns3")}


@with_docker
def test_images_are_tagged_labelled_and_have_manifests(images):
    ns3 = images["ns3"]
    assert ns3["base"] == images["base"]["tag"]
    assert ns3["tag"] == f"qlab/ns3:{containers.plan('ns3')[0].split(':')[1]}"
    assert containers.inspect(ns3["tag"])["Id"] == ns3["id"]
    labels = ns3["labels"]
    assert labels["org.opencontainers.image.version"] == containers.__version__
    assert len(labels["org.opencontainers.image.revision"]) >= 40
    man = ns3["manifest"]
    assert man["debian"]["libns3-dev"].startswith("3.37")
    pins = dict(
        line.split("==")
        for line in (REPO / "requirements.txt").read_text().splitlines()
        if "==" in line and not line.startswith("#")
    )
    assert {k: man["python"].get(k) for k in pins} == pins
    user = subprocess.run(
        ["docker", "image", "inspect", "-f", "{{.Config.User}}", ns3["id"]],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert user == "qlab"
    # a proxy's CA certificate given to the pip step stays out of the image
    history = subprocess.run(
        ["docker", "history", "--no-trunc", "--format", "{{.CreatedBy}}", ns3["id"]],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "COPY --from=venv" in history or "COPY dir:" in history
    assert "PIP_EXTRA_CA=" not in history and "BEGIN CERTIFICATE" not in history


@with_docker
def test_an_unchanged_image_is_not_rebuilt(images):
    stamps = [containers.stamp_path(n) for n in ("base", "ns3")]
    before = [p.stat().st_mtime_ns for p in stamps]
    proc = subprocess.run(
        [sys.executable, "-m", "qlab", "images", "build", "ns3"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    )
    assert proc.stderr.count("exists, not rebuilt") == 2 and "building" not in proc.stderr
    assert json.loads(stamps[1].read_text())["id"] == images["ns3"]["id"]
    # the stamps did not change, so the workflow has nothing to do
    assert [p.stat().st_mtime_ns for p in stamps] == before
    cmd = [str(SNAKEMAKE), *DOCKER_PROFILE, "--cores", "2", "--dry-run", "build/images/ns3.json"]
    out = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, check=True)
    assert "Nothing to be done" in out.stdout + out.stderr


@with_docker
@needs(paths.NS3_RUNNER)
def test_a_job_in_the_image_gives_the_native_traces(images, tmp_path):
    results = tmp_path / "results"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "qlab",
            "expand",
            "scenarios/ncq-conf/flows.yaml",
            "--profile",
            "test",
            "--backend",
            "ns3",
            "--results",
            str(results),
        ],
        cwd=REPO,
        check=True,
    )
    jobs = sorted((results / "jobs").rglob("ncq_*/seed-1.json"))
    assert jobs
    job = jobs[0]
    native, boxed = tmp_path / "native", tmp_path / "docker"
    subprocess.run(
        [sys.executable, "-m", "qlab", "run-job", str(job), "--out", str(native)], cwd=REPO, check=True
    )
    env = dict(os.environ, QLAB_IMAGE_MOUNTS=str(tmp_path))
    subprocess.run(
        ["scripts/in-image", "ns3", "python3", "-m", "qlab", "run-job", str(job), "--out", str(boxed)],
        cwd=REPO,
        check=True,
        env=env,
    )
    for table in ("flows.csv.gz", "queues.csv.gz"):
        assert (boxed / table).read_bytes() == (native / table).read_bytes(), table
    run = json.loads((boxed / "run.json").read_text())
    assert run["image"]["id"] == images["ns3"]["id"]
    assert run["image"]["manifest"] == images["ns3"]["manifest"]
    assert "image" not in json.loads((native / "run.json").read_text())
    # the job ran as the calling user, so the host owns what it wrote
    assert (boxed / "run.json").stat().st_uid == os.getuid()


@with_docker
@needs(paths.NS3_RUNNER)
def test_the_simulate_rule_runs_in_the_image(images, tmp_path):
    """The workflow's own simulate job under the docker profile, against native."""
    results = tmp_path / "results"
    # the job runs the point's seeds (workflows/simulate.smk); seed 2's run is compared
    point = results / "ncq-conf/flows/ns3/droptail_flows-50/point.json"
    target = point.parent / "seed-2" / "run.json"
    common = [
        "--cores",
        "2",
        "--quiet",
        "rules",
        "--config",
        "profile=test",
        f"results={results}",
        f"site={tmp_path / 'site'}",
        f"scenarios={json.dumps(['scenarios/ncq-conf/flows.yaml'])}",
    ]
    proc = subprocess.run(
        [str(SNAKEMAKE), *DOCKER_PROFILE, *common, "--", str(point)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert json.loads(target.read_text())["image"]["id"] == images["ns3"]["id"]
    boxed = tmp_path / "boxed"
    shutil.copytree(target.parent, boxed)
    point.unlink()
    proc = subprocess.run(
        [str(SNAKEMAKE), "--workflow-profile", "workflows/profiles/local", *common, "--", str(point)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "image" not in json.loads(target.read_text())
    for table in ("flows.csv.gz", "queues.csv.gz"):
        assert (boxed / table).read_bytes() == (target.parent / table).read_bytes(), table


@with_docker
def test_export_images_writes_a_loadable_tarball(images, tmp_path):
    out = tmp_path / "images.tar"
    proc = subprocess.run(
        [sys.executable, "-m", "qlab", "export-images", "base", "ns3", "--out", str(out)],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    with tarfile.open(out) as tar:
        index = json.load(tar.extractfile("manifest.json"))
    tags = {t for entry in index for t in entry.get("RepoTags") or []}
    assert tags == {images["base"]["tag"], images["ns3"]["tag"]}
    bad = subprocess.run(
        [sys.executable, "-m", "qlab", "export-images", "nosuch", "--out", str(out)],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 2 and "no stamp for nosuch" in bad.stderr


# --- the emu image: Mininet jobs -------------------------------------------------

MININET = "mininet"
EMU_IMAGE = backends.get(MININET).image
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="the mininet backend needs root")
# Fidelity is judged on real timing: a run the shared machine's load made
# unfaithful is run again, and excused with a warning when every attempt
# broke only the timing invariants (conftest.faithful, as tests/test_mininet.py).


@pytest.fixture(scope="module")
def emu_image():
    """The mininet backend's image built by the workflow's rules (a no-op when built)."""
    cmd = [
        str(SNAKEMAKE),
        *DOCKER_PROFILE,
        "--cores",
        "2",
        "--quiet",
        "rules",
        "--config",
        f"backends={json.dumps([MININET])}",
        "--",
        f"build/images/{EMU_IMAGE}.json",
    ]
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=3600)
    if proc.returncode != 0:
        logs = "\n".join(
            f"== {p}\n" + p.read_text(errors="replace")[-2000:]
            for p in (REPO / "logs" / "images").glob("*.log")
        )
        pytest.fail(f"image build failed:\n{proc.stderr[-2000:]}\n{logs}")
    return json.loads(containers.stamp_path(EMU_IMAGE).read_text())


@with_docker
def test_the_emu_image_has_mininet_qlab_emu_and_qlabs_environment(emu_image):
    assert emu_image["tag"] == containers.plan(EMU_IMAGE)[0]
    man = emu_image["manifest"]
    for pkg in ("mininet", "iproute2", "ethtool", "bridge-utils", "iputils-ping", "procps", "make", "gcc"):
        assert pkg in man["debian"], pkg
    pins = dict(
        line.split("==")
        for line in (REPO / "requirements.txt").read_text().splitlines()
        if "==" in line and not line.startswith("#")
    )
    assert {k: man["python"].get(k) for k in pins} == pins
    assert emu_image["run"] == containers.run_settings(EMU_IMAGE)
    # qlab-emu built in, Mininet importable by Debian's Python, the lock the host's
    proc = subprocess.run(
        [
            "docker",
            "run",
            "--rm",
            "--network",
            "none",
            emu_image["id"],
            "sh",
            "-c",
            'echo "$QLAB_EMU"; qlab-emu --list | grep -x ncq; '
            '/usr/bin/python3 -c "import mininet.net"; readlink /run/qlab-mn/run.lock; '
            "command -v ansible-playbook",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == [
        "/opt/qlab/bin/qlab-emu",
        "ncq",
        "/run/qlab-mn-host/run.lock",
        "/opt/venv/bin/ansible-playbook",
    ]
    history = subprocess.run(
        ["docker", "history", "--no-trunc", "--format", "{{.CreatedBy}}", emu_image["id"]],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "PIP_EXTRA_CA=" not in history and "BEGIN CERTIFICATE" not in history


def _emu_plan(tmp_path: Path, series: str = "ncq") -> Path:
    results = tmp_path / "plans"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "qlab",
            "expand",
            "scenarios/ncq-conf/emu.yaml",
            "--profile",
            "test",
            "--backend",
            MININET,
            "--results",
            str(results),
        ],
        cwd=REPO,
        check=True,
        capture_output=True,
    )
    plans = sorted((results / "jobs").rglob(f"{series}_*/seed-1.json"))
    assert plans
    return plans[0]


def _host_links() -> set[str]:
    out = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True, check=True).stdout
    return {line.split(":", 2)[1].strip().split("@")[0] for line in out.splitlines()}


def _container_pids(cid: str) -> list[int]:
    """Host pids of the processes of a container (by their cgroup)."""
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if cid in (d / "cgroup").read_text():
                    out.append(int(d.name))
            except OSError:
                pass
    return out


def _exe(pid: int) -> str:
    try:
        return os.readlink(f"/proc/{pid}/exe")
    except OSError:
        return ""


def _netns(pid: int) -> str:
    try:
        return os.readlink(f"/proc/{pid}/ns/net")
    except OSError:
        return ""


def _environ(pid: int) -> dict[str, str]:
    try:
        raw = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return {}
    return dict(kv.split("=", 1) for kv in raw.decode(errors="replace").split("\0") if "=" in kv)


@with_docker
@needs_root
def test_a_killed_emu_container_leaves_nothing_on_the_host(emu_image, tmp_path):
    """docker kill mid-run: the run's namespaces, interfaces and processes
    were the container's and go with it; the host's interfaces are as before."""
    doc = json.loads(_emu_plan(tmp_path).read_text())
    doc["stop_when_done"] = False  # runs its whole duration (20 s)
    plan = tmp_path / "long.json"
    plan.write_text(json.dumps(doc))
    links_before = _host_links()
    env = dict(os.environ, QLAB_IMAGE_MOUNTS=str(tmp_path))
    proc = subprocess.Popen(
        [
            "scripts/in-image",
            EMU_IMAGE,
            "python3",
            "-m",
            "qlab",
            "run-job",
            str(plan),
            "--out",
            str(tmp_path / "out"),
            "--log",
            str(tmp_path / "log"),
        ],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    cid, tag = None, None
    deadline = time.monotonic() + 120
    try:
        # The tag is read from qlab-emu's environment once the kernel has set
        # it: during execve /proc/PID/exe names the new program before
        # /proc/PID/environ holds anything (mm->env_end is set later), so a
        # single read can find it empty.
        while time.monotonic() < deadline and not tag:
            assert proc.poll() is None, "the run ended before it could be killed"
            ps = subprocess.run(
                ["docker", "ps", "--no-trunc", "--format", "{{.ID}} {{.Command}}"],
                capture_output=True,
                text=True,
                check=True,
            ).stdout
            cid = next((line.split()[0] for line in ps.splitlines() if str(plan) in line), None)
            if cid:
                emu_pids = [p for p in _container_pids(cid) if _exe(p).endswith("/qlab-emu")]
                tag = next((t for p in emu_pids if (t := _environ(p).get("QLAB_MN_TAG"))), None)
            time.sleep(0.2)
        assert tag, "qlab-emu never started in the container with the run's tag"
        # the run's network namespaces (the container's, Mininet's nodes'), none the host's
        run_netns = {_netns(p) for p in _container_pids(cid)} - {""}
        assert len(run_netns) >= 3 and _netns(os.getpid()) not in run_netns
        subprocess.run(["docker", "kill", cid], capture_output=True, check=True)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            if cid:  # the container outlives a killed docker client
                subprocess.run(["docker", "kill", cid], capture_output=True)
            proc.kill()
    deadline = time.monotonic() + 20
    while _container_pids(cid) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _container_pids(cid) == []
    tagged = [p for p in os.listdir("/proc") if p.isdigit() and _environ(int(p)).get("QLAB_MN_TAG") == tag]
    assert tagged == []
    assert not any(name.startswith(tag) for name in _host_links())
    left = {_netns(int(p)) for p in os.listdir("/proc") if p.isdigit()} & run_netns
    assert left == set(), "a network namespace of the run outlived its container"
    assert _host_links() - links_before == set()
    assert not (tmp_path / "out" / "run.json").exists()
    ps = subprocess.run(["docker", "ps", "-a", "-q", "--no-trunc"], capture_output=True, text=True).stdout
    assert cid not in ps  # --rm


@with_docker
@needs_root
def test_a_mininet_job_runs_in_the_emu_image_through_the_workflow(emu_image, tmp_path):
    """The workflow's simulate job of a mininet plan under the docker profile:
    in the emu image (root, Mininet's capabilities, SCHED_FIFO), valid (or
    invalid only for timing the machine did not hold, in every attempt), its
    traces pass `qlab check-traces`, run.json names the image."""
    results = tmp_path / "results"
    point = results / "ncq-conf/emu" / MININET / "ncq_flows-10/point.json"
    target = point.parent / "seed-1" / "run.json"
    cmd = [
        str(SNAKEMAKE),
        *DOCKER_PROFILE,
        "--cores",
        "2",
        "--quiet",
        "rules",
        "--config",
        "profile=test",
        f"results={results}",
        f"site={tmp_path / 'site'}",
        f"scenarios={json.dumps(['scenarios/ncq-conf/emu.yaml'])}",
        f"backends={json.dumps([MININET])}",
    ]
    emu_build = REPO / "build" / "emu"
    built_natively = emu_build.exists()
    for attempt in range(TIMING_ATTEMPTS):
        again = ["--forcerun", str(point)] if attempt else []
        proc = subprocess.run(
            [*cmd, *again, "--", str(point)], cwd=REPO, capture_output=True, text=True, timeout=600
        )
        log = results / "logs/simulate/ncq-conf/emu" / MININET / "ncq_flows-10/seed-1.log"
        assert proc.returncode == 0, proc.stderr[-3000:] + (
            log.read_text(errors="replace")[-3000:] if log.exists() else ""
        )
        run = json.loads(target.read_text())
        if run["valid"]:
            break
        print(f"attempt {attempt}: unfaithful run: {run['invalid_reasons']}")
    faithful(run["valid"], run["invalid_reasons"])
    check = subprocess.run(
        [sys.executable, "-m", "qlab", "check-traces", str(target.parent)],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert check.returncode == 0, check.stdout + check.stderr
    assert run["backend"] == MININET and run["all_completed"] is True
    assert run["image"]["name"] == EMU_IMAGE
    assert run["image"]["tag"] == emu_image["tag"] and run["image"]["id"] == emu_image["id"]
    assert run["image"]["manifest"] == emu_image["manifest"]
    assert run["versions"]["mininet"] and run["versions"]["qlab-emu"]
    # the scenario's bottleneck (scenarios/ncq-conf/emu.yaml)
    assert run["fidelity"]["configured_rate_bps"] == 5_000_000
    # the image's qlab-emu ran: nothing was built into the checkout
    assert emu_build.exists() == built_natively
    # the job ran as root in the container: the host's root owns what it wrote
    assert target.stat().st_uid == 0


@with_docker
@needs(REPO / "build" / "linux" / "kmod" / "sch_ncq.ko")
def test_the_kmod_image_builds_the_modules_and_plugins_as_the_host_does(images, tmp_path):
    """containers/kmod does disciplines/linux's build: the same modules (same
    vermagic, and the same kernel unless Debian's archive published newer
    headers between the host's setup and the image's build) and tc plugins
    as the host's build/linux."""
    proc = subprocess.run(
        [sys.executable, "-m", "qlab", "images", "build", "kmod"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=3600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = tmp_path / "linux"
    env = dict(os.environ, QLAB_IMAGE_MOUNTS=str(tmp_path))
    build = ["scripts/in-image", "kmod", "make", "-s", "-C", "disciplines/linux", f"BUILD={out}"]
    proc = subprocess.run(build, cwd=REPO, capture_output=True, text=True, env=env, timeout=900)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]

    def vermagic(ko: Path) -> str:
        return subprocess.run(
            ["modinfo", "-F", "vermagic", str(ko)], capture_output=True, text=True, check=True
        ).stdout.strip()

    # The image installs the newest linux-headers-amd64 when it is built, the
    # host had the newest of its setup: a security update in between (it
    # happened, 6.1.0-56 -> -57 within the 40 minutes of a CI run) moves
    # only the release, never the build's flags.
    image_kver = subprocess.run(
        ["scripts/in-image", "kmod", "disciplines/linux/vm/kver.sh"],
        cwd=REPO,
        capture_output=True,
        text=True,
        env=env,
        check=True,
    ).stdout.strip()
    host_kver = subprocess.run(
        ["disciplines/linux/vm/kver.sh"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.strip()
    for name in ("qlab_core", "sch_ncq", "sch_cqaqm", "sch_srd", "sch_rbwfq"):
        host = vermagic(REPO / "build/linux/kmod" / f"{name}.ko")
        assert host.split()[0] == host_kver
        assert vermagic(out / "kmod" / f"{name}.ko") == host.replace(host_kver, image_kver, 1)
    if image_kver != host_kver:
        print(f"the image's headers are {image_kver}, the host's {host_kver}: Debian's archive moved")
    for name in ("ncq", "cqaqm", "srd", "rbwfq"):
        assert (out / "tc" / f"q_{name}.so").stat().st_size > 0
