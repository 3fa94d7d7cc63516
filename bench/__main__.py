"""Every benchmark in turn (bench.prompts aside: it compares profiles, for a real-size model), each in a
fresh process, each writing its JSON receipt:

    .venv/bin/python -m bench [--receipts DIR] [NAME ...]

Defaults: all of them, on the bundled demo model, receipts into bench/receipts/. Each one's
table is printed as it runs; a summary says which goals were met. `download` needs nginx,
`camera_rate` Debian's chromium.
Exit 0 when every goal was met, 1 when one was missed, 2 when a benchmark failed to run.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from bench._report import run_benchmark

BENCHES = (  # the fast ones first
    "sampler",
    "rhythm_cost",
    "rhythm",
    "rhythm_views",
    "decoding",
    "checklist",
    "card_age",
    "kept_text",
    "question_place",
    "pipeline_overhead",
    "defaults",
    "memory",
    "ui_responsiveness",
    "live_screen",
    "download",
    "camera_rate",
)
RECEIPTS = Path(__file__).resolve().parent / "receipts"


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", metavar="NAME", help="any of: " + ", ".join(BENCHES))
    parser.add_argument("--receipts", type=Path, default=RECEIPTS, help="folder for the JSON receipts")
    args = parser.parse_args()
    unknown = sorted(set(args.names) - set(BENCHES))
    if unknown:
        parser.error(f"no benchmark named {', '.join(unknown)}")
    outcome: dict[str, int] = {}
    for name in args.names or BENCHES:
        print(f"\n=== bench.{name}", flush=True)
        receipt = args.receipts / f"{name}.json"
        outcome[name] = subprocess.run([sys.executable, "-m", f"bench.{name}", "--receipt", str(receipt)]).returncode
    print("\n=== summary")
    words = {0: "every goal met", 1: "a goal MISSED"}
    for name, code in outcome.items():
        print(f"  {name:<18} {words.get(code, f'FAILED (exit {code})')}")
    return max((code if code in (0, 1) else 2 for code in outcome.values()), default=0)  # a signal is < 0


if __name__ == "__main__":
    run_benchmark(main)
