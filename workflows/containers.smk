# Docker images (containers/) as ordinary rules, and `runtime: docker`
# (workflows/profiles/docker): jobs run in their image with the checkout
# mounted (scripts/in-image). Images are tagged by a hash of their inputs; an
# image whose tag exists is not rebuilt (qlab/containers.py).
import time

from qlab import containers as qlab_containers
from qlab import provenance as qlab_provenance

HOST_PY = sys.executable
WORKFLOW_START = time.time()


wildcard_constraints:
    image="|".join(qlab_containers.IMAGES),


rule image:
    input:
        lambda w: qlab_containers.rule_inputs(w.image, config["quarto_deb"]),
    output:
        "build/images/{image}.json",
    log:
        "logs/images/{image}.log",
    params:
        py=HOST_PY,
        quarto=lambda w: f"--quarto-deb {config['quarto_deb']}" if w.image == "analysis" and config["quarto_deb"] else "",
    # docker builds use every core they are given; the engine is shared
    threads: 2
    shell:
        "nice {params.py} -m qlab images build {wildcards.image} --no-deps {params.quarto} > {log} 2>&1"


# A rerun whose versions differ from the previous report's says so.
onsuccess:
    qlab_provenance.warn_changes(Path(RESULTS) / "provenance.json", WORKFLOW_START)


if RUNTIME == "docker":
    _unsupported = [b for b in config["backends"] if b not in qlab_containers.DOCKER_BACKENDS]
    if _unsupported:
        print(f"runtime docker: no image runs the {', '.join(_unsupported)} backend yet "
              f"(supported: {', '.join(qlab_containers.DOCKER_BACKENDS)})", file=sys.stderr)
        sys.exit(2)
    # A stamp whose image left the engine is forgotten, so its rule runs again.
    try:
        for _name in qlab_containers.forget_missing():
            print(f"images: {_name} is no longer in the Docker engine; building it again", file=sys.stderr)
    except qlab_containers.ImageError as exc:  # no engine: image rules will say so
        print(f"runtime docker: {exc}", file=sys.stderr)
    # Jobs of these rules run in their image: Snakemake starts their shell
    # command through containers/<image>/shell (its shell_exec resource),
    # which runs it with `bash -c` inside the image (scripts/in-image).
    for _rule, _image in qlab_containers.RULE_IMAGES.items():
        workflow.get_rule(_rule).resources["shell_exec"] = f"containers/{_image}/shell"
    # Results and site may lie outside the checkout: mount them too; host
    # jobs (provenance) find the checkout's Python as `python3` (PY).
    qlab_containers.use_docker_runtime([RESULTS, SITE], HOST_PY)
