"""Large statistics dumps (issue 17, point 8): `numprobe compare`, `scan` and `report` on a
generated pair of N-entry msprobe statistics dumps (bench/make_stats_dump.py), each as the CLI
runs it, against the physical reference measured in the same run: one RapidJSON SAX pass over
the files the command reads (bench/sax_pass.cc, full precision, NaN/Infinity accepted, read in
pieces through one buffer as numprobe's readers read): both dump.json files for compare, the
target's alone for scan. Each run of compare and scan follows a run of its reference, and the
ratio is the median of those pairs' ratios (report: one run, against one reference run over both
files just before it); peak RSS is the child's own (wait4), reported against the size of the
files the command reads. Targets: compare and scan <= 3x the SAX pass, peak RSS <= 2x the files.

Compare and scan also write their tables (compare: the CSV and its JSON twin, about 2.5x the
dumps' bytes; scan: the headroom CSV, a row per tensor, about the target's size), which the SAX
pass does not: a second line gives each against the SAX pass plus dd writing the same number of
bytes into the same folder (conv=fsync, as numprobe's outputs are made durable), the floor under
reading the dumps and writing the result, measured after each run.

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


def folder_bytes(folder):
    return sum(os.path.getsize(os.path.join(root, f))
               for root, _, names in os.walk(folder) for f in names)


def dd_write(folder, nbytes):
    """Seconds dd takes to write `nbytes` into a new file in `folder` and fsync it."""
    path = os.path.join(folder, "dd.bin")
    os.sync()
    t0 = time.perf_counter()
    subprocess.run(["dd", "if=/dev/zero", f"of={path}", "bs=1M",
                    f"count={max(1, nbytes >> 20)}", "conv=fsync"], check=True,
                   capture_output=True)
    seconds = time.perf_counter() - t0
    os.remove(path)
    return seconds


def paired_run(args, reference, reps, output=None, write_floor=False):
    """Each run of `args` right after a run of `reference`: (median of the time ratios, median
    time, median reference time, peak RSS, and with `write_floor` the median ratio against the
    reference plus dd writing the bytes the run wrote into `output`, and those bytes). This VM's
    speed drifts by up to half within minutes, so a reference measured once, minutes before, made
    the ratio drift with it."""
    ratios, floor_ratios, seconds, ref_seconds, rss, written = [], [], [], [], 0, 0
    for _ in range(reps):
        ref_s = timed(reference)[0]
        run_s, run_rss, _ = timed(args, output)
        ratios.append(run_s / ref_s)
        seconds.append(run_s)
        ref_seconds.append(ref_s)
        rss = max(rss, run_rss)
        if write_floor:
            written = folder_bytes(output)
            floor = output + ".dd"  # beside the run's output, which a later step may read
            os.makedirs(floor, exist_ok=True)
            floor_ratios.append(run_s / (ref_s + dd_write(floor, written)))
            os.rmdir(floor)
    return (statistics.median(ratios), statistics.median(seconds),
            statistics.median(ref_seconds), rss,
            statistics.median(floor_ratios) if write_floor else None, written)


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
        compare_ratio, compare_s, compare_sax_s, compare_rss, compare_floor, compare_written = \
            paired_run([numprobe, "compare", "-tp", target, "-gp", golden, "-o", out], reference,
                       reps, out, write_floor=True)
        # Scan reads the target's dump.json alone: its reference is the SAX pass over that file,
        # and its memory is measured against that file's size.
        scan_out = os.path.join(scratch, "scan")
        scan_size = os.path.getsize(files[0])
        scan_ratio, scan_s, scan_sax_s, scan_rss, scan_floor, scan_written = paired_run(
            [numprobe, "scan", target, "-o", scan_out], [sax, files[0]], reps, scan_out,
            write_floor=True)
        report = os.path.join(scratch, "report.html")
        sax_s = timed(reference)[0]
        report_s, report_rss = median_run([numprobe, "report", out, "-o", report], 1)
        detail = (f"{entries} entries per side, {mib:.0f} MiB of dump.json, median of {reps} runs "
                  "each against the SAX pass just before it")
        line("large statistics compare vs SAX pass", compare_ratio, 3,
             f"{detail}: compare {compare_s:.2f} s, SAX pass {compare_sax_s:.2f} s")
        print(f"BENCH large statistics compare vs SAX pass + writing its result: ratio "
              f"{compare_floor:.2f} | compare wrote {compare_written / (1 << 20):.0f} MiB; the "
              f"reference is the SAX pass and dd writing as many bytes (conv=fsync) after it")
        line("large statistics scan vs SAX pass", scan_ratio, 3,
             f"{entries} entries, the target's {scan_size / (1 << 20):.0f} MiB of dump.json, "
             f"median of {reps} runs each against the SAX pass over that file just before it: "
             f"scan {scan_s:.2f} s, SAX pass {scan_sax_s:.2f} s")
        print(f"BENCH large statistics scan vs SAX pass + writing its result: ratio "
              f"{scan_floor:.2f} | scan wrote {scan_written / (1 << 20):.0f} MiB (the headroom "
              f"CSV lists every tensor); the reference is the SAX pass over the target and dd "
              f"writing as many bytes (conv=fsync) after it")
        line("large statistics compare peak RSS vs files", compare_rss / size, 2,
             f"{compare_rss / (1 << 20):.0f} MiB for {mib:.0f} MiB")
        line("large statistics scan peak RSS vs file", scan_rss / scan_size, 2,
             f"{scan_rss / (1 << 20):.0f} MiB for the target's {scan_size / (1 << 20):.0f} MiB")
        print(f"BENCH large statistics report vs SAX pass: ratio {report_s / sax_s:.2f} | "
              f"report {report_s:.2f} s, peak RSS {report_rss / (1 << 20):.0f} MiB "
              f"({report_rss / size:.2f}x the files), report.html "
              f"{os.path.getsize(report) / (1 << 20):.1f} MiB")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
