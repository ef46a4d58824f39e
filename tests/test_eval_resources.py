"""ResourceMonitor measures real processes: this one and a helper that allocates and spins."""

import subprocess
import sys

from neoweave.eval.resources import ResourceMonitor

HELPER = "import time\nblock = b\"x\" * (200 * 2**20)\nend = time.time() + 1.0\nwhile time.time() < end: pass\n" \
         "time.sleep(0.5)\n"


def test_monitor_reports_peak_memory_and_cpu_per_process():
    helper = subprocess.Popen([sys.executable, "-c", HELPER])
    try:
        with ResourceMonitor({"helper": helper.pid, "gone": None}, interval=0.05) as monitor:
            helper.wait(timeout=30)
    finally:
        helper.kill()
    usage = monitor.usage
    assert set(usage.processes) == {"neoweave", "helper"}  # a role without a pid is left out
    assert usage.processes["helper"].peak_rss_mb > 200  # the bytearray is resident
    assert 0.5 < usage.processes["helper"].cpu_seconds < 5  # about one second of spinning
    assert usage.processes["neoweave"].peak_rss_mb > 10
    assert 1.0 < usage.wall_seconds < 30
    flat = usage.flat()
    assert flat["helper_peak_rss_mb"] == usage.processes["helper"].peak_rss_mb
    assert flat["cpu_percent"] == 100 * usage.cpu_seconds / usage.wall_seconds
