"""Localization benchmark: captures the planted-bug corpus (tests/corpus), runs `numprobe compare`
on every variant (case x configuration x numprobe/msprobe format) and prints the localization
score, then the time per case as ratios against physical references measured in the same run:
compare + analysis against reading the two dump trees' bytes (warm cache), and capture against
the same training step run without the debugger. Medians.

  PYTHONPATH=BUILD/python /usr/bin/python3 bench/verdict_bench.py BUILD/tools/numprobe/numprobe
"""
import os
import shutil
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "corpus"))
import make_corpus  # noqa: E402
import planted  # noqa: E402
import score  # noqa: E402


class NoDebugger:
    """The debugger's calls, doing nothing: the undumped reference run."""

    def start(self, model=None):
        pass

    def stop(self):
        pass

    def step(self):
        pass


def read_bytes(*roots):
    """Seconds to read every file under `roots` once."""
    t0 = time.perf_counter()
    for root in roots:
        for folder, _, files in os.walk(root):
            for name in files:
                with open(os.path.join(folder, name), "rb") as f:
                    while f.read(1 << 20):
                        pass
    return time.perf_counter() - t0


def undumped_seconds(case):
    times = []
    for _ in range(5):
        t0 = time.perf_counter()
        planted.RUNNERS[case.model](case.name, NoDebugger())
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    numprobe_bin = sys.argv[1]
    base = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
    root = tempfile.mkdtemp(prefix="numprobe_verdict_bench_", dir=base)
    try:
        corpus = os.path.join(root, "corpus")
        expected = make_corpus.make(corpus, planted.CASES, make_corpus.CONFIGS)
        verdicts = score.score_corpus(numprobe_bin, corpus, jobs=1)
        located = sum(v.located for v in verdicts)
        ok = sum(v.ok for v in verdicts)
        print(f"verdict_bench: localization score {located}/{len(verdicts)} variants "
              f"({100.0 * located / len(verdicts):.1f}%); {ok} also name the expected cast and "
              f"say why; {len(planted.CASES)} cases x {len(make_corpus.CONFIGS)} configurations "
              f"x {len(score.FORMATS)} formats")
        for v in verdicts:
            if not v.ok:
                print(f"verdict_bench:   missed {v.label}: {'; '.join(v.problems)}")
        ratios, seconds = [], []
        for v in verdicts:
            target = os.path.join(corpus, v.fmt, "target", v.case, v.config)
            golden = os.path.join(corpus, v.fmt, "golden", v.expect["model"], v.config)
            read_bytes(target, golden)  # warm the cache
            reference = statistics.median(read_bytes(target, golden) for _ in range(3))
            seconds.append(v.seconds)
            ratios.append(v.seconds / max(reference, 1e-9))
        print(f"verdict_bench: compare + analysis per variant: median {statistics.median(seconds) * 1e3:.1f} ms"
              f" = {statistics.median(ratios):.1f}x reading the two dump trees' bytes")
        capture, capture_ratio = [], []
        for case in planted.CASES:
            per_config = expected["capture_seconds"][case.name] / len(make_corpus.CONFIGS)
            capture.append(per_config)
            capture_ratio.append(per_config / max(undumped_seconds(case), 1e-9))
        print(f"verdict_bench: capture per case and configuration: median "
              f"{statistics.median(capture) * 1e3:.0f} ms = {statistics.median(capture_ratio):.1f}x "
              f"the same step without the debugger")
        return 0 if ok == len(verdicts) else 1
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
