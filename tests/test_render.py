"""qlab render: quarto when it is on PATH (checked with a stand-in), else knitr + pandoc."""

from __future__ import annotations

import os
import stat
import subprocess
import sys

from qlab import paths

from .conftest import REPO


def render_with_fake_quarto(tmp_path, script: str, *args: str) -> subprocess.CompletedProcess:
    """`qlab render ARGS` with a stand-in `quarto` (a shell script) first on PATH."""
    fake = tmp_path / "bin" / "quarto"
    fake.parent.mkdir(exist_ok=True)
    fake.write_text(f"#!/bin/sh\n{script}\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    return subprocess.run(
        [sys.executable, "-m", "qlab", "render", "--results", str(tmp_path), *args],
        cwd=REPO,
        env=dict(os.environ, PATH=f"{fake.parent}:{os.environ['PATH']}"),
        capture_output=True,
        text=True,
    )


def test_render_uses_quarto_with_the_requested_site(tmp_path):
    site = tmp_path / "site"
    proc = render_with_fake_quarto(tmp_path, 'echo "$@" > "$QLAB_SITE.args"', "--site", str(site))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(site / "index.html")
    args = (tmp_path / "site.args").read_text().split()
    assert args == ["render", str(paths.REPORTS), "--output-dir", str(site)]


def test_render_failure_is_one_line_and_exit_2(tmp_path):
    proc = render_with_fake_quarto(tmp_path, "exit 1", "--site", str(tmp_path / "s"))
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert proc.stderr.strip().endswith("failed (exit 1)")


def test_render_pages_renders_those_pages_and_refuses_unknown_ones(tmp_path):
    site = tmp_path / "site"

    def render(pages):
        return render_with_fake_quarto(
            tmp_path, 'echo "$@" >> "$QLAB_SITE.args"', "--pages", pages, "--site", str(site)
        )

    proc = render("ncq-conf.qmd,verdicts.qmd")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == [str(site / "ncq-conf.html"), str(site / "verdicts.html")]
    lines = (tmp_path / "site.args").read_text().splitlines()
    assert lines == [
        f"render {paths.REPORTS / p} --output-dir {site}" for p in ("ncq-conf.qmd", "verdicts.qmd")
    ]
    # a page the site does not list: one line naming it and the list, nothing rendered
    proc = render("ncq-conf.qmd,nosuch.qmd")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "nosuch.qmd not in" in proc.stderr and "_quarto.yml" in proc.stderr
    assert len((tmp_path / "site.args").read_text().splitlines()) == 2
