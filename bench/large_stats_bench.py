"""Large statistics dumps (issue 17, point 8): `numprobe compare`, `scan` and `report` on a
generated pair of N-entry msprobe statistics dumps (bench/make_stats_dump.py), each as the CLI
runs it, against the physical reference measured in the same run: one RapidJSON SAX pass over
both dump.json files (bench/sax_pass.cc, full precision, NaN/Infinity accepted, read in pieces
through one buffer as numprobe's readers read). Each run of compare and scan follows a run of the
reference, and the ratio is the median of those pairs' ratios (report: one run, against one
reference run just before it); peak RSS is the child's own (wait4), reported against the two
files' size. Targets: compare and scan <= 3x the SAX pass, peak RSS <= 2x the files.

  /usr/bin/python3 bench/large_stats_bench.py BUILD/tools/numprobe/numprobe BUILD/bench/sax_pass

NUMPROBE_BENCH_LARGE_ENTRIES sets N (default 1000000, the issue's size: two files of about 620 MiB
with this generator, and some minutes; 200000 or 50000 for a quick run), NUMPROBE_BENCH_REPS the repetitions (default 3),
NUMPROBE_BENCH_DIR the scratch folder.
"""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def timed(args, output=None):
    """(seconds, peak RSS in bytes, exit code) of one run of `args`. The previous run's output
    folder `output` is removed and the page cache flushed first, so that every run starts from the
    same state: no run waits for another's writeback, or writes beside its files (runs that wrote
    into a folder holding the earlier runs' tables were up to 40% slower on this VM's disk)."""
    if output is not None:
        shutil.rmtree(output, ignore_errors=True)
    os.sync()
    t0 = time.perf_counter()
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode("utf-8", "replace")
    proc.stderr.close()
    if proc.returncode not in (0, 1):
        sys.exit(f"{' '.join(args)} failed ({proc.returncode}): {err}")
    return seconds, usage.ru_maxrss * 1024, proc.returncode


def median_run(args, reps, output=None):
    runs = [timed(args, output) for _ in range(reps)]
    return statistics.median(r[0] for r in runs), max(r[1] for r in runs)


def paired_run(args, reference, reps, output=None):
    """Each run of `args` right after a run of `reference`: (median of the time ratios, median
    time, median reference time, peak RSS). This VM's speed drifts by up to half within minutes,
    so a reference measured once, minutes before, made the ratio drift with it."""
    ratios, seconds, ref_seconds, rss = [], [], [], 0
    for _ in range(reps):
        ref_s = timed(reference)[0]
        run_s, run_rss, _ = timed(args, output)
        ratios.append(run_s / ref_s)
        seconds.append(run_s)
        ref_seconds.append(ref_s)
        rss = max(rss, run_rss)
    return (statistics.median(ratios), statistics.median(seconds),
            statistics.median(ref_seconds), rss)


def line(name, ratio, target, detail):
    verdict = "ok" if ratio <= target else "OVER"
    print(f"BENCH {name}: ratio {ratio:.2f} (target <= {target:g}) {verdict} | {detail}")


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: large_stats_bench.py NUMPROBE SAX_PASS")
    numprobe, sax = sys.argv[1], sys.argv[2]
    entries = int(os.environ.get("NUMPROBE_BENCH_LARGE_ENTRIES", "1000000"))
    reps = int(os.environ.get("NUMPROBE_BENCH_REPS", "3"))
    scratch = tempfile.mkdtemp(prefix="numprobe_large_stats_",
                               dir=os.environ.get("NUMPROBE_BENCH_DIR") or None)
    try:
        subprocess.run([sys.executable, os.path.join(HERE, "make_stats_dump.py"), scratch,
                        str(entries)], check=True, stdout=subprocess.DEVNULL)
        target = os.path.join(scratch, "target", "step0")
        golden = os.path.join(scratch, "golden", "step0")
        files = [os.path.join(target, "rank0", "dump.json"),
                 os.path.join(golden, "rank0", "dump.json")]
        size = sum(os.path.getsize(f) for f in files)
        mib = size / (1 << 20)
        for f in files:  # warm the page cache for every measurement alike
            with open(f, "rb") as fh:
                while fh.read(1 << 24):
                    pass
        reference = [sax, *files]
        out = os.path.join(scratch, "out")
        compare_ratio, compare_s, compare_sax_s, compare_rss = paired_run(
            [numprobe, "compare", "-tp", target, "-gp", golden, "-o", out], reference, reps, out)
        scan_out = os.path.join(scratch, "scan")
        scan_ratio, scan_s, scan_sax_s, scan_rss = paired_run(
            [numprobe, "scan", target, "-o", scan_out], reference, reps, scan_out)
        report = os.path.join(scratch, "report.html")
        sax_s = timed(reference)[0]
        report_s, report_rss = median_run([numprobe, "report", out, "-o", report], 1)
        detail = (f"{entries} entries per side, {mib:.0f} MiB of dump.json, median of {reps} runs "
                  "each against the SAX pass just before it")
        line("large statistics compare vs SAX pass", compare_ratio, 3,
             f"{detail}: compare {compare_s:.2f} s, SAX pass {compare_sax_s:.2f} s")
        line("large statistics scan vs SAX pass", scan_ratio, 3,
             f"{detail}: scan {scan_s:.2f} s, SAX pass {scan_sax_s:.2f} s")
        line("large statistics compare peak RSS vs files", compare_rss / size, 2,
             f"{compare_rss / (1 << 20):.0f} MiB for {mib:.0f} MiB")
        line("large statistics scan peak RSS vs files", scan_rss / size, 2,
             f"{scan_rss / (1 << 20):.0f} MiB for {mib:.0f} MiB")
        print(f"BENCH large statistics report vs SAX pass: ratio {report_s / sax_s:.2f} | "
              f"report {report_s:.2f} s, peak RSS {report_rss / (1 << 20):.0f} MiB "
              f"({report_rss / size:.2f}x the files), report.html "
              f"{os.path.getsize(report) / (1 << 20):.1f} MiB")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
