"""bench/perf_calibration.py writes each step of an autocomp trace to a kernel file of its own
(the tracer reads kernel source); the files go when the script exits."""
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

TRACE = """candidates = [
Candidate(code='''def test(a):
    return a
''',
score=1.0),
Candidate(code='''def test(a):
    return 2 * a
''',
score=2.0),
]
"""

PROGRAM = """
import sys
sys.path.insert(0, {bench!r})
import perf_calibration
first, second = perf_calibration.trace_step({trace!r}, 0), perf_calibration.trace_step({trace!r}, 1)
print(first(3), second(3))
print(first.__code__.co_filename)
print(second.__code__.co_filename)
"""


def test_a_traces_steps_are_kernel_files_removed_at_exit(tmp_path):
    trace = tmp_path / "trace.py"
    trace.write_text(TRACE)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "python"), str(ROOT / "build" / "python")]))
    out = subprocess.run([sys.executable, "-c", PROGRAM.format(bench=str(ROOT / "bench"), trace=str(trace))],
                         env=env, capture_output=True, text=True, check=True).stdout.split("\n")
    assert out[0] == "3 6"
    first, second = Path(out[1]), Path(out[2])
    assert first.name == "step0.py" and second.name == "step1.py" and first.parent == second.parent
    assert not first.parent.exists()
