# qlab: scenario files -> jobs -> simulation -> traces -> statistics -> report.
# Run through `make reproduce`; see README.md. Rules live in workflows/.


include: "workflows/common.smk"
include: "workflows/build.smk"
include: "workflows/simulate.smk"
include: "workflows/analyze.smk"
include: "workflows/report.smk"
include: "workflows/containers.smk"
include: "workflows/linux.smk"


rule all:
    default_target: True
    input:
        f"{SITE}/index.html",
