"""Runs manual_nvtx_regions.py in two child processes, one after the other, on the same GPU: one ncu
report then holds two processes, each its own scope in the region report."""
import os
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
for size in ("512", "1024"):
    subprocess.run([sys.executable, os.path.join(here, "manual_nvtx_regions.py"), size], check=True)
