"""Runs the closed loop of tests/python/test_closed_loop.py in OUT: the baseline run, then the run
with the planted bug (layer_norm's eps), both with one closed-loop config; prints the report.html
the second run's stop() wrote into its dump_path, then the planted op. closed_loop.test.mjs opens
that report in the browser.
    PYTHONPATH=BUILD/python /usr/bin/python3 tests/browser/make_closed_loop.py OUT"""
import pathlib
import subprocess
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "python"))
from test_closed_loop import EXPLICIT_SCRIPT, PLANTED_OP, write_config  # noqa: E402


def main():
    out = pathlib.Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    script = out / "train.py"
    script.write_text(EXPLICIT_SCRIPT)
    good, bad = out / "gpu_dump", out / "ms_dump"
    for config, dump, base, eps in ((out / "good.json", good, bad, 1e-5),
                                    (out / "bad.json", bad, good, 0.5)):
        write_config(config, dump, base)
        subprocess.run([sys.executable, str(script), str(config), str(eps), "-1"], check=True,
                       cwd=out, stdout=subprocess.DEVNULL)
    report = bad / "report.html"
    if not report.is_file():
        sys.exit(f"stop() wrote no {report}")
    print(report)
    print(PLANTED_OP)


if __name__ == "__main__":
    main()
