"""Containerized builds and runs (issue 7): qlab's images and `runtime: docker`.

The first tests need no Docker engine (image tags, provenance comparison, how
the docker profile wires jobs to images). The rest build the base and ns-3
images through the workflow's own rules, run a tiny job inside, and compare
its trace tables byte for byte with a native run of the same job; they run
only when a Docker engine answers and QLAB_TEST_DOCKER=1 (tests/test_docker.sh
sets it), since a cold build takes minutes.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from qlab import containers, paths, provenance

from .conftest import REPO, needs

SNAKEMAKE = Path(sys.executable).parent / "snakemake"
DOCKER_PROFILE = ["--workflow-profile", "workflows/profiles/docker"]


def docker_reachable() -> bool:
    try:
        return subprocess.run(["docker", "info"], capture_output=True, timeout=20).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


with_docker = pytest.mark.skipif(
    os.environ.get("QLAB_TEST_DOCKER") != "1" or not docker_reachable(),
    reason="needs a Docker engine and QLAB_TEST_DOCKER=1 (tests/test_docker.sh)")


# --- no engine needed --------------------------------------------------------

@pytest.fixture
def fake_root(tmp_path, monkeypatch):
    """A checkout with one image `toy` built FROM `base`."""
    (tmp_path / "containers" / "toy").mkdir(parents=True)
    (tmp_path / "containers" / "toy" / "Dockerfile").write_text("ARG BASE\nFROM ${BASE}\n")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.c").write_text("int a;\n")
    monkeypatch.setattr(paths, "ROOT", tmp_path)
    monkeypatch.setitem(containers.IMAGES, "toy",
                        containers.Image("toy", "containers/toy/Dockerfile", files=("src/*.c",)))
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
    stamp.write_text(json.dumps({"name": "ns3", "tag": "qlab/ns3:abc", "id": "sha256:1",
                                 "manifest_sha256": "m", "manifest": manifest}))
    monkeypatch.setenv("QLAB_IMAGE", "ns3")
    monkeypatch.setenv("QLAB_IMAGE_TAG", "qlab/ns3:abc")
    monkeypatch.setenv("QLAB_IMAGE_ID", "sha256:1")
    monkeypatch.setenv("QLAB_IMAGE_STAMP", str(stamp))
    assert containers.current_image() == {"name": "ns3", "tag": "qlab/ns3:abc", "id": "sha256:1",
                                          "manifest_sha256": "m", "manifest": manifest}
    # a stamp of another image (rebuilt since the job started) is not claimed
    monkeypatch.setenv("QLAB_IMAGE_ID", "sha256:2")
    assert "manifest" not in containers.current_image()


def test_provenance_lists_versions_that_changed():
    old = {"packages": {"libns3-dev": "3.37-1", "pandoc": "2.17"}, "python_packages": {"snakemake": "9"},
           "images": [{"name": "ns3", "id": "sha256:1", "manifest": {"debian": {"gcc": "12.1"}}}]}
    new = {"packages": {"libns3-dev": "3.37-2", "pandoc": "2.17"}, "python_packages": {"snakemake": "9"},
           "images": [{"name": "ns3", "id": "sha256:2", "manifest": {"debian": {"gcc": "12.2"}}}]}
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


def dry_run(tmp_path: Path, *extra: str) -> str:
    cmd = [str(SNAKEMAKE), *extra, "--dry-run", "--nolock", "--cores", "2", "--config", "profile=test",
           f"results={tmp_path / 'results'}", f"site={tmp_path / 'site'}",
           f"scenarios={json.dumps(['scenarios/ncq-conf/flows.yaml'])}"]
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
    assert len(by_rule["simulate"]) == 8
    for block in by_rule["simulate"]:
        assert "shell_exec=containers/ns3/shell" in block and "build/images/ns3.json" in block
    for rule, image in (("collect", "ns3"), ("analyze", "analysis"), ("report", "analysis")):
        assert all(f"shell_exec=containers/{image}/shell" in b for b in by_rule[rule]), rule
    assert all("shell_exec" not in b for b in by_rule["provenance"])
    # the runner comes from the image, not from a native build
    assert "build_ns3" not in by_rule


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
        logs = "\n".join(f"== {p}\n" + p.read_text(errors="replace")[-2000:]
                         for p in (REPO / "logs" / "images").glob("[bn]*.log"))
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
    pins = dict(line.split("==") for line in (REPO / "requirements.txt").read_text().splitlines()
                if "==" in line and not line.startswith("#"))
    assert {k: man["python"].get(k) for k in pins} == pins
    user = subprocess.run(["docker", "image", "inspect", "-f", "{{.Config.User}}", ns3["id"]],
                          capture_output=True, text=True, check=True).stdout.strip()
    assert user == "qlab"
    # a proxy's CA certificate given to the pip step stays out of the image
    history = subprocess.run(["docker", "history", "--no-trunc", "--format", "{{.CreatedBy}}", ns3["id"]],
                             capture_output=True, text=True, check=True).stdout
    assert "COPY --from=venv" in history or "COPY dir:" in history
    assert "PIP_EXTRA_CA=" not in history and "BEGIN CERTIFICATE" not in history


@with_docker
def test_an_unchanged_image_is_not_rebuilt(images):
    stamps = [containers.stamp_path(n) for n in ("base", "ns3")]
    before = [p.stat().st_mtime_ns for p in stamps]
    proc = subprocess.run([sys.executable, "-m", "qlab", "images", "build", "ns3"], cwd=REPO,
                          capture_output=True, text=True, check=True)
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
    subprocess.run([sys.executable, "-m", "qlab", "expand", "scenarios/ncq-conf/flows.yaml",
                    "--profile", "test", "--results", str(results)], cwd=REPO, check=True)
    jobs = sorted((results / "jobs").rglob("ncq_*/seed-1.json"))
    assert jobs
    job = jobs[0]
    native, boxed = tmp_path / "native", tmp_path / "docker"
    subprocess.run([sys.executable, "-m", "qlab", "run-job", str(job), "--out", str(native)],
                   cwd=REPO, check=True)
    env = dict(os.environ, QLAB_IMAGE_MOUNTS=str(tmp_path))
    subprocess.run(["scripts/in-image", "ns3", "python3", "-m", "qlab", "run-job", str(job),
                    "--out", str(boxed)], cwd=REPO, check=True, env=env)
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
    target = results / "ncq-conf/flows/ns3/droptail_flows-50/seed-2/run.json"
    common = ["--cores", "2", "--quiet", "rules", "--config", "profile=test", f"results={results}",
              f"site={tmp_path / 'site'}", f"scenarios={json.dumps(['scenarios/ncq-conf/flows.yaml'])}"]
    proc = subprocess.run([str(SNAKEMAKE), *DOCKER_PROFILE, *common, "--", str(target)], cwd=REPO,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert json.loads(target.read_text())["image"]["id"] == images["ns3"]["id"]
    boxed = tmp_path / "boxed"
    shutil.copytree(target.parent, boxed)
    target.unlink()
    proc = subprocess.run([str(SNAKEMAKE), "--workflow-profile", "workflows/profiles/local", *common,
                           "--", str(target)], cwd=REPO, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "image" not in json.loads(target.read_text())
    for table in ("flows.csv.gz", "queues.csv.gz"):
        assert (boxed / table).read_bytes() == (target.parent / table).read_bytes(), table


@with_docker
def test_export_images_writes_a_loadable_tarball(images, tmp_path):
    out = tmp_path / "images.tar"
    proc = subprocess.run([sys.executable, "-m", "qlab", "export-images", "base", "ns3", "--out", str(out)],
                          cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    with tarfile.open(out) as tar:
        index = json.load(tar.extractfile("manifest.json"))
    tags = {t for entry in index for t in entry.get("RepoTags") or []}
    assert tags == {images["base"]["tag"], images["ns3"]["tag"]}
    bad = subprocess.run([sys.executable, "-m", "qlab", "export-images", "nosuch", "--out", str(out)],
                         cwd=REPO, capture_output=True, text=True)
    assert bad.returncode == 2 and "no stamp for nosuch" in bad.stderr


@with_docker
@needs(REPO / "build" / "linux" / "kmod" / "sch_ncq.ko")
def test_the_kmod_image_builds_the_modules_and_plugins_as_the_host_does(images, tmp_path):
    """containers/kmod does disciplines/linux's build: the same modules (same
    kernel, same vermagic) and tc plugins as the host's build/linux."""
    proc = subprocess.run([sys.executable, "-m", "qlab", "images", "build", "kmod"], cwd=REPO,
                          capture_output=True, text=True, timeout=3600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = tmp_path / "linux"
    env = dict(os.environ, QLAB_IMAGE_MOUNTS=str(tmp_path))
    build = ["scripts/in-image", "kmod", "make", "-s", "-C", "disciplines/linux", f"BUILD={out}"]
    proc = subprocess.run(build, cwd=REPO, capture_output=True, text=True, env=env, timeout=900)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]

    def vermagic(ko: Path) -> str:
        return subprocess.run(["modinfo", "-F", "vermagic", str(ko)], capture_output=True, text=True,
                              check=True).stdout.strip()

    for name in ("qlab_core", "sch_ncq", "sch_cqaqm", "sch_srd", "sch_rbwfq"):
        assert vermagic(out / "kmod" / f"{name}.ko") == vermagic(REPO / "build/linux/kmod" / f"{name}.ko")
    for name in ("ncq", "cqaqm", "srd", "rbwfq"):
        assert (out / "tc" / f"q_{name}.so").stat().st_size > 0
