"""Size, write time and load time of the browser viewer (``ipcsim view``) of finished runs.

    python benchmarks/viewer_load.py OUT [OUT ...] [--shots DIR] [--frame last|K] [--color body|distance]

For each run directory: writes OUT/viewer.html (``ipcsim.app.viewer.write_viewer``, timed), prints its size, the part
that is the run's data (the rest is three.js and the page, about 1 MB), frames and vertices, and, where Debian's
chromium and chromedriver and selenium are installed, the time from opening the file URL in headless Chromium
until the viewer is ready (data inflated, first frame drawn; median of 3 loads). ``--shots DIR`` saves a
screenshot of each page (DIR/<OUT's name>.png) at ``--frame``.
"""
from __future__ import annotations

import argparse
import re
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from ipcsim.app.viewer import write_viewer

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--enable-unsafe-swiftshader", "--window-size=1100,760", "--force-device-scale-factor=1")


def _driver():
    browser, chromedriver = shutil.which("chromium"), shutil.which("chromedriver")
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        return None
    if not browser or not chromedriver:
        return None
    opts = webdriver.ChromeOptions()
    opts.binary_location = browser
    for flag in (*FLAGS, f"--user-data-dir={tempfile.mkdtemp(prefix='ipcsim-chromium-')}"):
        opts.add_argument(flag)
    return webdriver.Chrome(options=opts, service=Service(chromedriver))


def load_seconds(driver, page: Path) -> float:
    """Seconds from opening ``page`` until window.ipcsimViewer.ready."""
    driver.get("about:blank")
    start = time.perf_counter()
    driver.get(page.resolve().as_uri())
    while True:
        state = driver.execute_script("return window.ipcsimViewer && [ipcsimViewer.ready, ipcsimViewer.error]")
        if state and state[1]:
            raise RuntimeError(f"{page}: {state[1]}")
        if state and state[0]:
            return time.perf_counter() - start
        time.sleep(0.01)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", nargs="+", type=Path)
    ap.add_argument("--shots", type=Path)
    ap.add_argument("--frame", default="last")
    ap.add_argument("--color", choices=("body", "distance"), default="body")
    args = ap.parse_args(argv)
    driver = _driver()
    print("run | frames | vertices | viewer.html [MB] | run data [MB] | write [s] | load in Chromium [s]")
    try:
        for out in args.out:
            t0 = time.perf_counter()
            page = write_viewer(out)
            write = time.perf_counter() - t0
            html = page.read_text(encoding="utf-8")
            data = re.search(r'id="ipcsim-data">(.*?)</script>', html, re.S).group(1)
            frames = re.search(r'"nFrames":(\d+)', data).group(1)
            verts = re.search(r'"nVerts":(\d+)', data).group(1)
            load = "-"
            if driver is not None:
                load = f"{statistics.median(load_seconds(driver, page) for _ in range(3)):.2f}"
                if args.shots:
                    args.shots.mkdir(parents=True, exist_ok=True)
                    k = "ipcsimViewer.nFrames - 1" if args.frame == "last" else str(int(args.frame))
                    driver.execute_script(f"ipcsimViewer.setColorMode('{args.color}'); ipcsimViewer.setFrame({k})")
                    driver.save_screenshot(str(args.shots / f"{out.resolve().name}.png"))
            print(f"{out} | {frames} | {verts} | {len(html.encode()) / 1e6:.2f} | {len(data) / 1e6:.3f} | "
                  f"{write:.2f} | {load}")
    finally:
        if driver is not None:
            driver.quit()


if __name__ == "__main__":
    main()
