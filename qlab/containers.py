"""qlab's Docker images: build them from containers/, record what is in them,
say which one a job ran in, and export them.

Each image is tagged ``qlab/<name>:<12 hex digits>``, a hash of its inputs: its
recipe (Dockerfile, or the base image's debootstrap script), the files copied
into it, the tag of the image it is built FROM and its build arguments. An
image whose tag already exists is not rebuilt. After each build (or check),
``build/images/<name>.json`` (the stamp Snakemake tracks) records the tag,
the image id and the image's package manifest: Debian package versions
(dpkg-query), Python distributions and R packages.

Which image a backend's jobs run in, and what they need from ``docker run``,
come from the backend registry (``Backend.image``, ``docker_options``,
``realtime``): no backend is named here.

No registry is needed: the base image is a debootstrap of Debian 12, imported
(containers/base/mkrootfs.sh). Standard library and qlab only: `run-job`
imports :func:`current_image` in every job. Docker is driven through its CLI,
not the PyPI `docker` package: every call here is a build, inspect, save or
rmi whose output the CLI already formats and streams to the log, the CLI is
what a user types to check an image by hand, and the package would add a
dependency to every job's interpreter and a client whose API version must
match the daemon's.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from qlab import __version__, backends, paths

STAMPS = paths.BUILD / "images"
CONTEXTS = STAMPS / "context"
REPO = "qlab"


@dataclass(frozen=True)
class Image:
    name: str
    recipe: str  # Dockerfile, or the base's build script
    base: str | None = "base"  # the qlab image it is built FROM
    files: tuple[str, ...] = ()  # globs (repo-relative) copied into the context
    recipe_files: tuple[str, ...] = field(default=())  # more recipe inputs (base)


# What a Dockerfile copies from the checkout is in its own header: lines
#   # qlab-context: GLOB [GLOB]...
# (repo-relative), so an image is one file: containers/<name>/Dockerfile.
CONTEXT_LINE = "# qlab-context:"


def _discover() -> dict[str, Image]:
    """The base (a debootstrap, not a Dockerfile) and every
    containers/<name>/Dockerfile, FROM the base."""
    images = {
        "base": Image(
            "base",
            "containers/base/mkrootfs.sh",
            base=None,
            recipe_files=("containers/base/apt.conf", "containers/base/dpkg.cfg"),
        )
    }
    for dockerfile in sorted((paths.ROOT / "containers").glob("*/Dockerfile")):
        name = dockerfile.parent.name
        files = tuple(
            glob
            for line in dockerfile.read_text(encoding="utf-8").splitlines()
            if line.startswith(CONTEXT_LINE)
            for glob in line[len(CONTEXT_LINE) :].split()
        )
        images[name] = Image(name, str(dockerfile.relative_to(paths.ROOT)), files=files)
    return images


IMAGES: dict[str, Image] = _discover()

# Under `runtime: docker`, a backend's jobs (these rules, whose paths carry
# the backend) run in the backend's image (Backend.image); analyses and the
# report in the analysis image; the rest (image builds, provenance, which
# asks git) on the host.
BACKEND_RULES = ("simulate", "simulate_batch", "collect", "collect_batch", "collect_set")
ANALYSIS_IMAGE = "analysis"
ANALYSIS_RULES = ("analyze", "analyze_bench", "bench_decide", "page", "report")


class ImageError(Exception):
    pass


def backend_image(backend: str) -> str | None:
    """The image a backend's jobs run in (Backend.image), None when it has
    none defined in containers/."""
    image = backends.get(backend).image
    return image if image in IMAGES else None


def docker_backends() -> list[str]:
    """The backends whose jobs can run in one of qlab's images."""
    return [name for name in backends.names() if backend_image(name)]


def images_for(backend_names: list[str]) -> list[str]:
    """The images a reproduction on these backends runs jobs in: each
    backend's, then the analysis image (their bases are built on the way)."""
    out = []
    for name in backend_names:
        image = backend_image(name)
        if image is None:
            raise ImageError(f"the {name} backend has no image (Backend.image; images: {', '.join(IMAGES)})")
        out.append(image)
    return list(dict.fromkeys([*out, ANALYSIS_IMAGE]))


def default_images() -> list[str]:
    """What `qlab images build` builds without names: the images of the
    backends this machine runs (`qlab backends --available`) and analysis."""
    return images_for([b for b in backends.available()[0] if backend_image(b)])


def shell(image: str) -> str:
    """Snakemake's shell for jobs in an image (their shell_exec resource)."""
    return f"containers/{image}/shell"


def run_settings(name: str) -> dict[str, Any]:
    """How scripts/in-image runs jobs in an image, from the backends whose
    image it is: their extra `docker run` options (Backend.docker_options),
    and whether they run in real time (Backend.realtime: the container then
    gets a real-time CPU budget where the kernel groups one)."""
    users = [backends.get(b) for b in backends.names() if backends.get(b).image == name]
    options: list[str] = []
    for b in users:
        options += b.docker_options
    return {"options": options, "realtime": any(b.realtime for b in users)}


def used_by(name: str) -> str:
    """What runs in an image (`qlab images list`)."""
    users = [f"backend {b}" for b in backends.names() if backends.get(b).image == name]
    if name == ANALYSIS_IMAGE:
        users.append(" and ".join(ANALYSIS_RULES))
    if not users and any(img.base == name for img in IMAGES.values()):
        users.append("what the others are built FROM")
    return ", ".join(users) or "by hand (scripts/in-image)"


def stamp_path(name: str) -> Path:
    return STAMPS / f"{name}.json"


def input_files(name: str) -> list[str]:
    """Repo-relative files an image is made from (what Snakemake watches)."""
    img = IMAGES[name]
    out = [img.recipe, *img.recipe_files]
    for pattern in img.files:
        found = sorted(str(p.relative_to(paths.ROOT)) for p in paths.ROOT.glob(pattern) if p.is_file())
        if not found:
            raise ImageError(f"image {name}: no file matches {pattern}")
        out += found
    return out


def _base_mirror_args() -> list[str]:
    # The base's inputs include the archive it is bootstrapped from.
    return [f"{k}={os.environ.get(k, '')}" for k in ("QLAB_DEBIAN_MIRROR", "QLAB_DEBIAN_SECURITY_MIRROR")]


def inputs_sha256(name: str, base_tag: str | None, build_args: dict[str, str]) -> str:
    h = hashlib.sha256()
    for rel in input_files(name):
        data = (paths.ROOT / rel).read_bytes()
        h.update(f"file {rel} {len(data)}\n".encode() + data + b"\n")
    h.update(f"base {base_tag}\n".encode())
    for k in sorted(build_args):
        h.update(f"arg {k}={build_args[k]}\n".encode())
    if name == "base":
        h.update(("\n".join(_base_mirror_args()) + "\n").encode())
    return h.hexdigest()


def _docker(
    *args: str, check: bool = True, capture: bool = True, stdin: bytes | None = None, **kw: Any
) -> subprocess.CompletedProcess:
    try:
        proc = subprocess.run(["docker", *args], capture_output=capture, input=stdin, check=False, **kw)
    except FileNotFoundError:
        raise ImageError("docker is not installed (the docker runtime needs a Docker engine)") from None
    if check and proc.returncode != 0:
        err = (proc.stderr or b"").decode("utf-8", "replace").strip().splitlines()
        raise ImageError(
            f"docker {args[0]} failed (exit {proc.returncode}): " + (err[-1] if err else "no message")
        )
    return proc


def inspect(ref: str) -> dict[str, Any] | None:
    proc = _docker("image", "inspect", ref, check=False)
    if proc.returncode != 0:
        return None
    return json.loads(proc.stdout)[0]


def _git_commit() -> str:
    def git(*args: str) -> str:
        out = subprocess.run(
            ["git", "-C", str(paths.ROOT), *args], capture_output=True, text=True, check=False
        )
        return out.stdout.strip() if out.returncode == 0 else ""

    head = git("rev-parse", "HEAD") or "unknown"
    return head + ("-dirty" if git("status", "--porcelain", "--untracked-files=no") else "")


def _extra_ca() -> str:
    """Extra CA certificates for a TLS-inspecting proxy in front of PyPI
    (QLAB_EXTRA_CA, else /usr/local/share/ca-certificates/*.crt). Used by one
    build step only; not an input of the image's tag."""
    src = os.environ.get("QLAB_EXTRA_CA")
    files = [Path(src)] if src else sorted(Path("/usr/local/share/ca-certificates").glob("*.crt"))
    return "".join(f.read_text(encoding="utf-8", errors="replace") for f in files if f.is_file())


def _stage_context(name: str, quarto_deb: Path | None) -> Path:
    import shutil

    ctx = CONTEXTS / name
    shutil.rmtree(ctx, ignore_errors=True)
    ctx.mkdir(parents=True)
    img = IMAGES[name]
    shutil.copy2(paths.ROOT / img.recipe, ctx / "Dockerfile")
    for rel in input_files(name)[1:]:
        (ctx / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(paths.ROOT / rel, ctx / rel)
    (ctx / "quarto").mkdir()
    (ctx / "quarto" / ".keep").touch()
    if quarto_deb:
        shutil.copy2(quarto_deb, ctx / "quarto" / quarto_deb.name)
    return ctx


def plan(name: str, quarto_deb: Path | None = None) -> tuple[str, str | None, dict[str, str]]:
    """(tag, base tag, build arguments) of an image, from its inputs and its base's stamp."""
    img = IMAGES[name]
    base_tag = None
    if img.base:
        stamp = stamp_path(img.base)
        if not stamp.exists():
            raise ImageError(f"image {name} is built FROM {img.base}: build that first ({stamp} missing)")
        base_tag = json.loads(stamp.read_text(encoding="utf-8"))["tag"]
    args: dict[str, str] = {}
    if name == "analysis" and quarto_deb:
        args["QUARTO_DEB"] = quarto_deb.name
        args["QUARTO_DEB_SHA256"] = hashlib.sha256(quarto_deb.read_bytes()).hexdigest()
    digest = inputs_sha256(name, base_tag, args)
    return f"{REPO}/{name}:{digest[:12]}", base_tag, args


MANIFEST_SCRIPT = r"""
echo '# debian'
dpkg-query -W -f='${Package}\t${Version}\n'
echo '# python'
for py in python3; do
  command -v "$py" >/dev/null 2>&1 || continue
  "$py" -c 'import importlib.metadata as m
for d in m.distributions():
    print(d.name + chr(9) + d.version)' 2>/dev/null
done
echo '# r'
if command -v Rscript >/dev/null 2>&1; then
  Rscript -e 'ip <- installed.packages()
    cat(sprintf("%s\t%s\n", ip[, "Package"], ip[, "Version"]), sep = "")'
  Rscript -e 'cat(sprintf("R\t%s.%s\n", R.version$major, R.version$minor))'
fi
"""


def manifest(tag: str) -> dict[str, dict[str, str]]:
    """Debian, Python and R package versions inside an image."""
    proc = _docker(
        "run",
        "--rm",
        "-i",
        "--network",
        "none",
        "--entrypoint",
        "/bin/sh",
        tag,
        "-s",
        stdin=MANIFEST_SCRIPT.encode(),
    )
    out: dict[str, dict[str, str]] = {"debian": {}, "python": {}, "r": {}}
    section = None
    for line in proc.stdout.decode("utf-8", "replace").splitlines():
        if line.startswith("# "):
            section = line[2:].strip()
        elif section in out and "\t" in line:
            pkg, version = line.split("\t", 1)
            key = pkg.lower() if section == "python" else pkg
            out[section][key] = version
    return {k: dict(sorted(v.items())) for k, v in out.items()}


def build(name: str, quarto_deb: Path | None = None, log=None) -> dict[str, Any]:
    """Build an image unless its tag exists; write and return its stamp."""
    if name not in IMAGES:
        raise ImageError(f"no image {name!r} (known: {', '.join(IMAGES)})")
    log = log or sys.stderr
    tag, base_tag, args = plan(name, quarto_deb)
    img = IMAGES[name]
    labels = {
        "org.opencontainers.image.title": f"qlab-{name}",
        "org.opencontainers.image.version": __version__,
        "org.opencontainers.image.revision": _git_commit(),
        "qlab.image": name,
        "qlab.inputs": tag.split(":")[1],
    }
    info = inspect(tag)
    built = info is None
    if built:
        print(f"images: building {tag}", file=log, flush=True)
        if img.base is None:
            change = [a for k, v in labels.items() for a in ("--change", f"LABEL {k}={v}")]
            proc = subprocess.run(
                [str(paths.ROOT / img.recipe), tag, *change], stdout=log, stderr=log, check=False
            )
        else:
            ctx = _stage_context(name, quarto_deb)
            cmd = ["build", "--force-rm", "--tag", tag, "--build-arg", f"BASE={base_tag}"]
            cmd += [a for k, v in labels.items() for a in ("--label", f"{k}={v}")]
            cmd += [
                a for k, v in args.items() if k != "QUARTO_DEB_SHA256" for a in ("--build-arg", f"{k}={v}")
            ]
            recipe = (ctx / "Dockerfile").read_text(encoding="utf-8")
            if "ARG PIP_EXTRA_CA" in recipe and (ca := _extra_ca()):
                cmd += ["--build-arg", f"PIP_EXTRA_CA={ca}"]
            env = dict(os.environ, DOCKER_BUILDKIT="0")  # no buildx here; the legacy builder
            proc = subprocess.run(["docker", *cmd, str(ctx)], stdout=log, stderr=log, env=env, check=False)
        if proc.returncode != 0:
            raise ImageError(f"building image {name} ({tag}) failed (exit {proc.returncode})")
        info = inspect(tag)
        if info is None:
            raise ImageError(f"image {tag} missing after its build")
    else:
        print(f"images: {tag} exists, not rebuilt", file=log, flush=True)
    stamp = stamp_path(name)
    previous = _read_json(stamp)
    if previous.get("id") == info["Id"] and previous.get("manifest"):
        packages = previous["manifest"]
    else:
        packages = manifest(tag)
    doc = {
        "name": name,
        "tag": tag,
        "id": info["Id"],
        "base": base_tag,
        "inputs_sha256": tag.split(":")[1],
        "created": info.get("Created"),
        "size_bytes": info.get("Size"),
        "labels": (info.get("Config") or {}).get("Labels") or {},
        "manifest_sha256": hashlib.sha256(_canonical(packages).encode()).hexdigest(),
        "manifest": packages,
        # read by scripts/in-image: how jobs run in it (not part of the image)
        "run": run_settings(name),
    }
    text = json.dumps(doc, indent=1) + "\n"
    # Unchanged, the stamp keeps its time: Snakemake reruns nothing after a
    # `qlab images build` that found every image (the workflow itself removes
    # a rule's output before running it, so there it is always new).
    if not stamp.exists() or stamp.read_text(encoding="utf-8") != text:
        stamp.parent.mkdir(parents=True, exist_ok=True)
        tmp = stamp.with_name(f".{stamp.name}.tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(stamp)
    return doc


def _canonical(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"))


def _read_json(path: Path) -> dict[str, Any]:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def current_image() -> dict[str, Any] | None:
    """The image this process runs in (set by scripts/in-image), for run.json:
    name, tag, id and, from its stamp when the ids agree, its manifest."""
    name = os.environ.get("QLAB_IMAGE")
    if not name:
        return None
    out: dict[str, Any] = {
        "name": name,
        "tag": os.environ.get("QLAB_IMAGE_TAG"),
        "id": os.environ.get("QLAB_IMAGE_ID"),
    }
    stamp = _read_json(Path(os.environ.get("QLAB_IMAGE_STAMP", stamp_path(name))))
    if stamp.get("id") == out["id"]:
        out["manifest_sha256"] = stamp.get("manifest_sha256")
        out["manifest"] = stamp.get("manifest")
    return out


def stamps(names: list[str] | None = None) -> dict[str, dict[str, Any]]:
    """The stamps present (optionally only of some images)."""
    out = {}
    for name in names or list(IMAGES):
        doc = _read_json(stamp_path(name))
        if doc:
            out[name] = doc
    return out


def rule_inputs(name: str, quarto_deb: str | None = None) -> list[str]:
    """Inputs of an image's workflow rule: its files, its base's stamp, the Quarto package."""
    files = input_files(name)
    if IMAGES[name].base:
        files.append(str(stamp_path(IMAGES[name].base).relative_to(paths.ROOT)))
    if name == "analysis" and quarto_deb:
        files.append(quarto_deb)
    return files


def use_docker_runtime(mounts: list[str], host_python: str, images: list[str]) -> None:
    """The environment of a workflow under `runtime: docker` (containers.smk):
    scripts/in-image mounts `mounts` (results and site may lie outside the
    checkout); provenance learns the runtime and the images the jobs run in
    (`images`, from :func:`images_for`); host jobs find the checkout's Python
    as `python3`."""
    os.environ["QLAB_IMAGE_MOUNTS"] = ":".join(str(Path(d).resolve()) for d in mounts)
    os.environ["QLAB_RUNTIME"] = "docker"
    os.environ["QLAB_IMAGES"] = ",".join(images)
    os.environ["PATH"] = f"{Path(host_python).parent}{os.pathsep}{os.environ.get('PATH', '')}"


def forget_missing() -> list[str]:
    """Delete the stamps of images no longer in the Docker engine (removed,
    pruned, another machine), so the workflow builds them again."""
    gone = []
    for name, doc in stamps().items():
        if doc.get("id") and inspect(doc["id"]) is None:
            stamp_path(name).unlink(missing_ok=True)
            gone.append(name)
    return gone


def prune() -> list[str]:
    """Remove older builds of the images this checkout has stamps for (other
    tags of qlab/<name>); images of names without a stamp here are kept, as
    another checkout may use them."""
    current = {f"{REPO}/{n}": d.get("tag") for n, d in stamps().items()}
    out = _docker("images", "--format", "{{.Repository}}:{{.Tag}}", f"{REPO}/*").stdout.decode()
    old = sorted(
        t
        for t in out.split()
        if t.split(":")[0] in current and t != current[t.split(":")[0]] and not t.endswith(":<none>")
    )
    if old:
        _docker("rmi", *old)
    return old


def export(names: list[str], out: Path) -> list[str]:
    """`docker save` the images (by their stamps' tags) into one tarball."""
    found = stamps(names)
    missing = [n for n in names if n not in found]
    if missing:
        raise ImageError(f"no stamp for {', '.join(missing)} under {STAMPS}: build them first")
    tags = [found[n]["tag"] for n in names]
    for t in tags:
        if inspect(t) is None:
            raise ImageError(f"image {t} is not in the Docker engine (rebuild it)")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp")
    if out.suffix == ".gz":
        import gzip

        proc = subprocess.Popen(["docker", "save", *tags], stdout=subprocess.PIPE)
        assert proc.stdout is not None
        with gzip.open(tmp, "wb", compresslevel=6) as f:
            while chunk := proc.stdout.read(1 << 20):
                f.write(chunk)
        if proc.wait() != 0:
            tmp.unlink(missing_ok=True)
            raise ImageError(f"docker save failed (exit {proc.returncode})")
    else:
        _docker("save", "--output", str(tmp), *tags, capture=False)
    tmp.replace(out)
    return tags
