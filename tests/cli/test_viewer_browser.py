"""viewer.html in a real browser: headless Chromium (Debian's `chromium` and `chromium-driver`, driven by selenium)
opens the page from a file URL, offline. No console errors; frame 0 and the last frame are drawn, not blank, and
differ where the falling cube moved; the scrubber shows frame k's positions (read back from the page's vertex
buffer) within the quantisation bound; the hide checkbox and the isolate button hide bodies; play runs at real time;
a drag orbits the camera about its target and the wheel zooms.

Without chromium, chromedriver or selenium the tests skip, and fail where the environment variable CI is set
(.ci/run installs them)."""
import io
import shutil
import tempfile
import time

import numpy as np
import pytest

from ipcsim.io.frames import read_ply

from _cli_helpers import frames_of
from _skip_check import ci_is_set
from _viewer_helpers import page_data, run_falling

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--enable-unsafe-swiftshader", "--window-size=1100,800", "--force-device-scale-factor=1")
HUES = {"bottom": 207.0, "top": 28.0}  # the bodies' colours in the palette (#4682b5, #e67d21) [deg]


def _tools():
    """(chromium, chromedriver) paths, or the reason they cannot be used."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    try:
        import selenium  # noqa: F401
    except ImportError:
        return None, "selenium is not installed (pip install -e '.[test]')"
    if not browser or not driver:
        return None, "chromium and chromedriver not found (apt-get install chromium chromium-driver)"
    return (browser, driver), None


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    """A selenium driver on the FALLING run's viewer.html (ipcsim view), and the run directory."""
    tools, why = _tools()
    if tools is None:
        if ci_is_set():
            pytest.fail(f"the browser tests need Chromium: {why} (CI is set)")
        pytest.skip(f"browser test: {why}")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    out = run_falling(tmp_path_factory.mktemp("browser"))
    from ipcsim.app.viewer import write_viewer

    html = write_viewer(out)
    opts = webdriver.ChromeOptions()
    opts.binary_location = tools[0]
    for flag in (*FLAGS, f"--user-data-dir={tempfile.mkdtemp(prefix='ipcsim-chromium-')}"):
        opts.add_argument(flag)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=opts, service=Service(tools[1]))
    try:
        start = time.perf_counter()
        driver.get(html.resolve().as_uri())
        state = None
        for _ in range(300):
            state = driver.execute_script("return window.ipcsimViewer && [ipcsimViewer.ready, ipcsimViewer.error]")
            if state and (state[0] or state[1]):
                break
            time.sleep(0.05)
        print(f"viewer ready {time.perf_counter() - start:.2f} s after the file URL was opened")
        assert state and state[0] and state[1] is None, state
        yield driver, out, page_data(html.read_text(encoding="utf-8"))
    finally:
        driver.quit()


def _shot(driver) -> np.ndarray:
    """(h, w, 3) uint8 RGB of the 3D view's canvas."""
    from PIL import Image

    png = driver.find_element("css selector", "#scene3d").screenshot_as_png
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))


def _hue_pixels(img: np.ndarray, hue: float) -> int:
    """Pixels of saturated colour within 12 degrees of ``hue`` (shading scales RGB: the hue stays)."""
    import colorsys

    rgb = img.reshape(-1, 3) / 255.0
    mx, mn = rgb.max(axis=1), rgb.min(axis=1)
    sat = (mx - mn) / np.maximum(mx, 1e-9)
    keep = (sat > 0.35) & (mx > 0.15)
    hues = np.array([colorsys.rgb_to_hsv(*p)[0] * 360.0 for p in rgb[keep]])
    return int(np.sum(np.abs((hues - hue + 180.0) % 360.0 - 180.0) < 12.0))


def _set_frame_with_the_scrubber(driver, k):
    driver.execute_script("const s = document.getElementById('scrub'); s.value = String(arguments[0]);"
                          "s.dispatchEvent(new Event('input')); ipcsimViewer.render();", k)


def test_loads_from_a_file_url_without_console_errors(page):
    driver, out, data = page
    errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    assert errors == []
    assert driver.execute_script("return ipcsimViewer.nFrames") == len(frames_of(out)) == 7
    assert "t = 0.0000 s" in driver.find_element("id", "overlay").text


def test_first_and_last_frame_drawn_and_differ_where_the_cube_moved(page, tmp_path):
    driver, out, data = page
    shots, boxes = [], []
    for k in (0, 6):
        _set_frame_with_the_scrubber(driver, k)
        shots.append(_shot(driver).astype(int))
        boxes.append(driver.execute_script("return ipcsimViewer.screenBox(1)"))
    for img in shots:  # not blank: both cubes drawn in their colours
        assert _hue_pixels(img, HUES["bottom"]) > 2000 and _hue_pixels(img, HUES["top"]) > 2000
    changed = np.abs(shots[0] - shots[1]).sum(axis=2) > 30
    rect = driver.find_element("css selector", "#scene3d").rect
    x0 = int(min(b[0] for b in boxes) - rect["x"]), int(min(b[1] for b in boxes) - rect["y"])
    x1 = int(max(b[2] for b in boxes) - rect["x"]), int(max(b[3] for b in boxes) - rect["y"])
    assert boxes[1][1] > boxes[0][1] + 10  # the top cube's picture moved down by more than 10 pixels
    inside = changed[max(x0[1], 0):x1[1], max(x0[0], 0):x1[0]]
    assert inside.mean() > 0.05 and inside.sum() > 0.9 * changed.sum()  # the change is where the cube went


def test_scrubbing_to_frame_k_shows_frame_k(page):
    driver, out, data = page
    for k in (3, 5, 1):
        _set_frame_with_the_scrubber(driver, k)
        assert driver.execute_script("return ipcsimViewer.frame()") == k
        assert f"frame {k} / 6" in driver.find_element("id", "frame-label").text
        v, f, body = read_ply(frames_of(out)[k], with_body=True)
        for b in data["bodies"]:
            shown = np.array(driver.execute_script("return ipcsimViewer.positions(arguments[0])", b["id"]))
            err = np.abs(shown.reshape(-1, 3) - v[body == b["id"]])
            # half a 16-bit step (2.1e-6 m here) plus float32 rounding of the vertex buffer (< 1e-8 m at 0.2 m);
            # measured 1.06e-6 m
            assert err.max() <= 0.5 * max(b["step"]) + 2e-8, (k, b["name"], err.max())


def test_hide_checkbox_and_isolate_button(page):
    driver, out, data = page
    _set_frame_with_the_scrubber(driver, 6)
    before = _shot(driver)
    driver.find_element("id", "show-1").click()  # hide the top cube
    driver.execute_script("ipcsimViewer.render()")
    hidden = _shot(driver)
    assert driver.execute_script("return ipcsimViewer.visible(1)") is False
    assert _hue_pixels(before, HUES["top"]) > 2000 and _hue_pixels(hidden, HUES["top"]) == 0
    assert _hue_pixels(hidden, HUES["bottom"]) >= _hue_pixels(before, HUES["bottom"])  # no longer covered
    driver.find_element("id", "show-1").click()
    driver.find_element("id", "isolate-1").click()  # only the top cube
    driver.execute_script("ipcsimViewer.render()")
    alone = _shot(driver)
    assert _hue_pixels(alone, HUES["bottom"]) == 0 and _hue_pixels(alone, HUES["top"]) > 2000
    driver.find_element("id", "isolate-1").click()  # again: everything
    assert driver.execute_script("return [ipcsimViewer.visible(0), ipcsimViewer.visible(1)]") == [True, True]


def test_plays_at_real_time(page):
    driver, out, data = page
    driver.execute_script("document.getElementById('speed').value = '0.1';"
                          "document.getElementById('loop').checked = false; ipcsimViewer.setFrame(0);"
                          "ipcsimViewer.play(); window._t0 = performance.now();")
    time.sleep(0.35)
    sim, wall = driver.execute_script("return [ipcsimViewer.times[ipcsimViewer.frame()],"
                                      " (performance.now() - window._t0) / 1000]")
    # at 0.1 x real time the frame shown is the last one at or before 0.1 * wall [s] (0.01 s apart); rAF runs at
    # about 60 Hz in headless Chromium, slower on a busy machine
    assert 0.1 * (wall - 0.1) - 0.01 <= sim <= 0.1 * wall + 1e-9, (sim, wall)  # ticks up to 0.1 s late (load)
    time.sleep(0.5)
    assert driver.execute_script("return ipcsimViewer.frame()") == 6  # stopped at the end (no loop)


def test_drag_orbits_and_wheel_zooms(page):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.actions.wheel_input import ScrollOrigin

    driver, out, data = page
    driver.find_element("id", "reset-view").click()
    canvas = driver.find_element("id", "scene3d")
    cam = lambda: np.array(driver.execute_script("return ipcsimViewer.camera()"))  # noqa: E731  eye, target
    c0 = cam()
    ActionChains(driver).move_to_element(canvas).click_and_hold().move_by_offset(120, 0).release().perform()
    c1 = cam()
    r0, r1 = np.linalg.norm(c0[:3] - c0[3:]), np.linalg.norm(c1[:3] - c1[3:])
    assert np.linalg.norm(c1[:3] - c0[:3]) > 0.1 * r0 and r1 == pytest.approx(r0, rel=1e-6)  # turned about the target
    assert np.allclose(c1[3:], c0[3:])
    ActionChains(driver).scroll_from_origin(ScrollOrigin.from_element(canvas), 0, -300).perform()
    time.sleep(0.1)
    c2 = cam()
    assert np.linalg.norm(c2[:3] - c2[3:]) < 0.9 * r1  # the wheel zoomed in
