"""pytest set-up of the Python package's tests.

TRELLIS_ONNX_BACKEND_SUMMARY=FILE makes the run write the outcome counts of the ONNX backend suite
(test_onnx_backend.py: its CPU cases) to FILE as JSON, for tests/conformance/make_conformance_doc.py.
"""
import collections
import json
import os

_outcomes = collections.Counter()


def pytest_runtest_logreport(report):
    if "test_onnx_backend.py" not in report.nodeid or not report.nodeid.endswith("_cpu"):
        return
    if report.when == "call" or (report.when == "setup" and report.outcome == "skipped"):
        if hasattr(report, "wasxfail"):
            _outcomes["xfailed" if report.skipped else "xpassed"] += 1
        else:
            _outcomes[report.outcome] += 1
    elif report.when == "setup" and report.outcome == "failed":
        _outcomes["failed"] += 1


def pytest_sessionfinish(session, exitstatus):
    path = os.environ.get("TRELLIS_ONNX_BACKEND_SUMMARY")
    if not path or not _outcomes:
        return
    import onnx

    summary = {
        "runner": "trellis.backend (onnx.backend.test.BackendTest)",
        "onnx": onnx.__version__,
        "backends": [b for b in os.environ.get("TRELLIS_TEST_BACKENDS", "CpuRef").split(",") if b],
        "cases": sum(_outcomes.values()),
        "passed": _outcomes["passed"],
        "skipped": _outcomes["skipped"],
        "known_failures": _outcomes["xfailed"],
        "failed": _outcomes["failed"] + _outcomes["xpassed"],
    }
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=1)
