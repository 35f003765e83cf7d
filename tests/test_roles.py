"""The Ansible roles that configure an emulation host: `--check` passes, and
a second run changes nothing (the roles that run traffic are exempt)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest

from .conftest import REPO

PLAYBOOK = ["-i", "inventories/localhost.yml", "playbooks/prepare-host.yml"]
pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("mn"), reason="needs root and Mininet (as make test on CI)"
)


def play(*extra: str) -> dict[str, int]:
    env = {**os.environ, "ANSIBLE_CONFIG": str(REPO / "playbooks" / "ansible.cfg"), "ANSIBLE_NOCOLOR": "1"}
    proc = subprocess.run(
        [str(REPO / ".venv" / "bin" / "ansible-playbook"), *PLAYBOOK, *extra],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    recap = re.search(r"localhost\s+: (.*)", proc.stdout)
    assert recap, proc.stdout[-2000:]
    return {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", recap.group(1))}


def test_prepare_host_passes_check_mode_and_is_idempotent():
    assert play("--check")["failed"] == 0
    play()
    second = play()
    assert second["changed"] == 0 and second["failed"] == 0, second
    # with the host-wide sysctls on, a run that finds them set changes nothing either
    on = ("-e", '{"emu_host_set_host_sysctls": true}')
    assert play(*on, "--check")["failed"] == 0
