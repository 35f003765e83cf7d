# Build the Linux kernel backend: qlab's qdisc modules (Kbuild against
# Debian's linux-headers-amd64) and their tc plugins (against Debian's
# iproute2 source), into build/linux/.  Included from the Snakefile by
# whoever wires the Linux backend in; disciplines/linux/tests/run.sh runs
# the same builds and then the VM tests.

LINUX_SOURCES = sorted(
    str(p)
    for pattern in (
        "*.[ch]",
        "Kbuild",
        "Makefile",
        "dkms.conf",
        "tc/*.[ch]",
        "tc/Makefile",
        "vm/*.sh",
        "tests/**/*",
    )
    for p in Path("disciplines/linux").glob(pattern)
    if p.is_file()
)
# the core's one source list and what it lists
LINUX_CORE_SOURCES = ["disciplines/core/sources.mk"] + sorted(
    str(p) for p in Path("disciplines/core").glob("*.[ch]")
)
# the generic qdisc (qlab: any discipline of the core) and the per-kind ones
LINUX_QDISCS = ["qlab", "ncq", "cqaqm", "srd", "rbwfq"]


rule linux_fetch:
    output:
        touch("build/linux/.fetched"),
    log:
        "logs/build/linux-fetch.log",
    threads: 1
    shell:
        "disciplines/linux/vm/fetch-deps.sh build/linux > {log} 2>&1"


rule linux_modules:
    input:
        LINUX_SOURCES,
        LINUX_CORE_SOURCES,
    output:
        "build/linux/kmod/qlab_core.ko",
        expand("build/linux/kmod/sch_{qdisc}.ko", qdisc=LINUX_QDISCS),
    log:
        "logs/build/linux-modules.log",
    threads: 2
    shell:
        "nice make -C disciplines/linux -j{threads} modules > {log} 2>&1"


rule linux_plugins:
    input:
        LINUX_SOURCES,
        LINUX_CORE_SOURCES,
        "build/linux/.fetched",
    output:
        expand("build/linux/tc/q_{qdisc}.so", qdisc=LINUX_QDISCS),
    log:
        "logs/build/linux-plugins.log",
    threads: 2
    shell:
        "nice make -C disciplines/linux -j{threads} plugins > {log} 2>&1"


rule linux_test:
    input:
        rules.linux_modules.output,
        rules.linux_plugins.output,
    output:
        touch("build/linux/.tested"),
    log:
        "logs/test/linux-vm.log",
    threads: 1
    shell:
        "disciplines/linux/tests/run.sh > {log} 2>&1"
