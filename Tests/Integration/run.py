"""Runs the integration tests and ends with the closing line 'N passed, N failed, N skipped'.

    python3 run.py [PATTERN] [--jobs N]

Each test file runs in its own Python process, N at a time (default TOKENBROKER_TEST_JOBS, else 4):
the tests mostly wait on processes, sockets and timers, not on the CPU, and every test already has
its own HOME, D-Bus session, keyring, emulator and ports. A file's output is printed whole when it
ends, so the log reads file by file. PATTERN (default test_*.py) picks the files."""
import argparse
import concurrent.futures
import glob
import os
import re
import subprocess
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SUMMARY = re.compile(rb"^integration: (\d+) passed, (\d+) failed, (\d+) skipped$", re.M)


def run_one(path):
    """Runs one file's tests in this process (the child side)."""
    sys.path.insert(0, HERE)
    suite = unittest.defaultTestLoader.discover(HERE, pattern=os.path.basename(path))
    result = unittest.TextTestRunner(verbosity=2, stream=sys.stdout).run(suite)
    failed = len(result.failures) + len(result.errors) + len(result.unexpectedSuccesses)
    passed = result.testsRun - failed - len(result.skipped)
    print("integration: %d passed, %d failed, %d skipped" % (passed, failed, len(result.skipped)), flush=True)
    return 1 if failed or result.testsRun == 0 else 0


def spawn(path):
    started = time.monotonic()
    p = subprocess.run([sys.executable, os.path.abspath(__file__), "--one", path],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    return path, p.returncode, p.stdout, time.monotonic() - started


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("pattern", nargs="?", default="test_*.py")
    parser.add_argument("--jobs", type=int, default=int(os.environ.get("TOKENBROKER_TEST_JOBS", "4")))
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        sys.exit(run_one(args.one))
    # Largest first: the long files start early instead of ending the run alone.
    files = sorted(glob.glob(os.path.join(HERE, args.pattern)), key=os.path.getsize, reverse=True)
    totals = [0, 0, 0]
    broken = []
    started = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for done in concurrent.futures.as_completed([pool.submit(spawn, f) for f in files]):
            path, code, output, seconds = done.result()
            name = os.path.basename(path)
            sys.stdout.buffer.write(b"\n===== %s (%.1f s)\n" % (name.encode(), seconds) + output)
            sys.stdout.flush()
            found = SUMMARY.findall(output)
            if found:
                for i, n in enumerate(found[-1]):
                    totals[i] += int(n)
            if code != 0 or not found:
                broken.append(name)
                if not found:
                    totals[1] += 1  # a file that died before its summary counts as one failure
    print("\nintegration: %d files in %.0f s, %d at a time; failing files: %s" % (
        len(files), time.monotonic() - started, args.jobs, " ".join(broken) or "none"))
    print("integration: %d passed, %d failed, %d skipped" % tuple(totals))
    sys.exit(1 if broken or not files else 0)


if __name__ == "__main__":
    main()
