# Build the discipline core and the backends' runners from source.

# the core's one source list and what it lists
CORE_SOURCES = ["disciplines/core/sources.mk"] + sorted(
    str(p) for p in Path("disciplines/core").glob("*.[ch]")
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


# Each backend's runner, as the backend declares it (qlab/backends: a new
# backend's build is part of its module, not listed here).
for _name in qlab_backends.names():
    _backend = qlab_backends.get(_name)
    if _backend.build_command:

        rule:
            name:
                f"build_{_name}"
            input:
                CORE_SOURCES,
                sorted(str(p) for pattern in _backend.build_inputs for p in Path().glob(pattern)),
            output:
                _backend.build_outputs,
            log:
                f"logs/build/{_name}.log",
            threads: 2
            # a param, not the shell string: directives are bound here, the
            # shell string only when the job runs (the loop has moved on)
            params:
                command=_backend.build_command,
            shell:
                "({params.command}) > {log} 2>&1"
