# Docker images (containers/) as ordinary rules, and `runtime: docker`
# (workflows/profiles/docker): jobs run in their image with the checkout
# mounted (scripts/in-image). Images are tagged by a hash of their inputs; an
# image whose tag exists is not rebuilt (qlab/containers.py).
import time

from qlab import containers as qlab_containers
from qlab import provenance as qlab_provenance

HOST_PY = sys.executable
WORKFLOW_START = time.time()

# The images the configured backends' jobs run in (Backend.image), and the
# analysis image; a backend without one cannot run under `runtime: docker`.
try:
    IMAGES_USED = qlab_containers.images_for(config["backends"])
except qlab_containers.ImageError as exc:
    IMAGES_USED = []
    if RUNTIME == "docker":
        print(
            f"runtime docker: {exc} (backends with an image: "
            f"{', '.join(qlab_containers.docker_backends())})",
            file=sys.stderr,
        )
        sys.exit(2)


wildcard_constraints:
    image="|".join(qlab_containers.IMAGES),


rule image:
    input:
        lambda w: qlab_containers.rule_inputs(w.image, config["quarto_deb"]),
    output:
        "build/images/{image}.json",
    log:
        "logs/images/{image}.log",
    # docker builds use every core they are given; the engine is shared
    threads: 2
    params:
        quarto=lambda w: (
            f"--quarto-deb {config['quarto_deb']}" if w.image == "analysis" and config["quarto_deb"] else ""
        ),
        # how jobs run in it (the stamp records it for scripts/in-image):
        # a change in the backends' docker options rewrites the stamp
        run=lambda w: json.dumps(qlab_containers.run_settings(w.image), sort_keys=True),
    shell:
        "nice python3 -m qlab images build {wildcards.image} --no-deps {params.quarto} > {log} 2>&1"


# Every image a reproduction on the configured backends runs jobs in (each
# backend's image, and analysis), with what they are built FROM:
# `make reproduce RUNTIME=docker` builds these first.
rule images:
    input:
        [f"build/images/{name}.json" for name in IMAGES_USED],
    localrule: True


# A rerun whose versions differ from the previous report's says so.
onsuccess:
    qlab_provenance.warn_changes(Path(RESULTS) / "provenance.json", WORKFLOW_START)


if RUNTIME == "docker":
    # A stamp whose image left the engine is forgotten, so its rule runs again.
    try:
        for _name in qlab_containers.forget_missing():
            print(f"images: {_name} is no longer in the Docker engine; building it again", file=sys.stderr)
    except qlab_containers.ImageError as exc:  # no engine: image rules will say so
        print(f"runtime docker: {exc}", file=sys.stderr)
    # Jobs of these rules run in their image: Snakemake starts their shell
    # command through containers/<image>/shell (its shell_exec resource),
    # which runs it with `bash -c` inside the image (scripts/in-image). A
    # backend's jobs run in the backend's image, analyses in analysis.
    for _rule in qlab_containers.BACKEND_RULES:
        workflow.get_rule(_rule).resources["shell_exec"] = lambda wildcards: qlab_containers.shell(
            qlab_containers.backend_image(wildcards.backend)
        )
    for _rule in qlab_containers.ANALYSIS_RULES:
        workflow.get_rule(_rule).resources["shell_exec"] = qlab_containers.shell(
            qlab_containers.ANALYSIS_IMAGE
        )
    # Results and site may lie outside the checkout: mount them too; host
    # jobs (provenance) find the checkout's Python as `python3`.
    qlab_containers.use_docker_runtime([RESULTS, SITE], HOST_PY, IMAGES_USED)
