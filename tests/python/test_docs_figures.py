"""The command outputs docs/cli.md and docs/sweep.md show (a ```text block that starts with
`$ nkic profile ...` or `$ nkic sweep ...`) are what the current code prints: each command is
run again and its output compared, figure for figure (a sweep's sim_s and worker columns, which
vary from run to run, excepted). A cost-model change that moves a documented latency fails here
until the page shows the new figures."""
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": f"{ROOT / 'python'}{os.pathsep}{ROOT / 'build' / 'python'}", "NO_COLOR": "1"}
COMMANDS = ("$ nkic profile ", "$ nkic sweep ")


def documented_runs():
    runs = []
    for name in ("cli.md", "sweep.md"):
        lines = (ROOT / "docs" / name).read_text().splitlines()
        for i, line in enumerate(lines):
            if line.startswith(COMMANDS) and lines[i - 1].strip() == "```text":
                end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
                runs.append(pytest.param(line[2:], lines[i + 1:end], id=f"{name}:{i + 1}"))
    return runs


RUNS = documented_runs()


def test_the_pages_document_a_profile_and_a_sweep():
    assert {r.values[0].split()[1] for r in RUNS} == {"profile", "sweep"}


def comparable(command, lines):
    """The lines as compared: a sweep row without its last two columns (sim_s, worker)."""
    if command.split()[1] != "sweep":
        return lines
    return [" ".join(line.split()[:-2]) if line.split() and not line.startswith("      err_") else line
            for line in lines]


@pytest.mark.parametrize("command,documented", RUNS)
def test_documented_output_is_what_the_command_prints(command, documented):
    argv = shlex.split(command)[1:]
    p = subprocess.run([sys.executable, "-m", "nkic", *argv], capture_output=True, text=True, env=ENV, cwd=ROOT,
                       timeout=600)
    assert p.returncode == 0, p.stderr
    printed = p.stdout.rstrip("\n").splitlines()
    assert comparable(command, printed) == comparable(command, documented), (
        f"docs show {command!r} printing figures the code no longer prints; now it prints:\n{p.stdout}")
