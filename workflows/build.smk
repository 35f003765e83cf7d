# Build the discipline core and the backends' runners from source.

# the core's one source list and what it lists
CORE_SOURCES = ["disciplines/core/sources.mk"] + sorted(str(p) for p in Path("disciplines/core").glob("*.[ch]"))
NS3_SOURCES = sorted(
    str(p) for pattern in ("*.cc", "*.h", "tests/*.cc") for p in Path("disciplines/ns3").glob(pattern)
)


rule build_core:
    input:
        CORE_SOURCES,
        "disciplines/core/Makefile",
    output:
        "build/core/qcore-replay",
        "build/core/libqcore.a",
    log:
        "logs/build/core.log",
    threads: 2
    shell:
        "make -C disciplines/core -j{threads} > {log} 2>&1"


rule build_ns3:
    input:
        CORE_SOURCES,
        NS3_SOURCES,
        "disciplines/ns3/CMakeLists.txt",
    output:
        "build/ns3/qlab-ns3-run",
        "build/ns3/qlab-ns3-golden",
        "build/ns3/qlab-ns3-test-typed",
        "build/ns3/qlab-ns3-test-flow-hash",
    log:
        "logs/build/ns3.log",
    threads: 2
    shell:
        "(cmake -S disciplines/ns3 -B build/ns3 -DCMAKE_BUILD_TYPE=Release"
        " && cmake --build build/ns3 -j{threads}) > {log} 2>&1"
