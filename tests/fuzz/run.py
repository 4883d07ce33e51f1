#!/usr/bin/env python3
"""Run N fuzz cases of one seed and print how they ended.

    PYTHONPATH=python:build/python /usr/bin/python3 tests/fuzz/run.py --cases 3000 --seed 1

prints the count of each outcome class, the diagnostic codes seen, and each failure
pattern (class and detail) once, with how often it occurred and its smallest case.
`--case I` reruns case I alone and prints its mutated source. Exit status 1 if any
case failed.
"""
import argparse
import collections
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import mutate  # noqa: E402
import runner  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--start", type=int, default=0, help="number of the first case")
    ap.add_argument("--case", type=int, help="run this one case and show its source")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=20.0, help="seconds per case")
    ap.add_argument("--mem-mb", type=int, default=4096, help="address-space limit per case (0: none)")
    ap.add_argument("--json", help="write every result to this file")
    args = ap.parse_args(argv)

    if args.case is not None:
        args.start, args.cases = args.case, 1
    cases = mutate.generate(args.seed, args.cases, start=args.start)
    began = time.monotonic()

    def progress(done, total):
        if done % 100 == 0 or done == total:
            print(f"  {done}/{total} cases, {time.monotonic() - began:.0f} s", file=sys.stderr, flush=True)

    results = runner.run_cases(cases, jobs=args.jobs, timeout=args.timeout, mem_mb=args.mem_mb,
                               progress=progress)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    if args.case is not None:
        print(runner.describe(results[0], source=True))
        return 1 if results[0]["outcome"] in runner.FAILURES else 0

    print(f"{len(results)} cases of seed {args.seed} in {time.monotonic() - began:.0f} s")
    for outcome, n in runner.counts(results).most_common():
        print(f"  {outcome:18} {n}")
    codes = collections.Counter(runner.label(r) for r in results if r["outcome"] in ("diagnostic", "user_error"))
    print("outcomes that are not failures: " + ", ".join(f"{c} {n}" for c, n in codes.most_common()))
    failing = collections.defaultdict(list)
    for r in results:
        if r["outcome"] in runner.FAILURES:
            failing[runner.signature(r)].append(r)
    print(f"{len(failing)} failure patterns")
    for sig, rs in sorted(failing.items(), key=lambda kv: -len(kv[1])):
        smallest = min(rs, key=lambda r: len(r["case"]["source"]))
        print(f"\n[{len(rs)}x] {sig}\n" + runner.describe(smallest))
    return 1 if failing else 0


if __name__ == "__main__":
    sys.exit(main())
