"""Headless Chromium for the page tests: a screenshot (PNG) and the DOM after the page loaded.

Debian's chromium package (make setup installs it). Running as root needs --no-sandbox; each call
gets its own profile directory so that parallel runs never share one.

gemmlab: instructor-only (only the staff tools' tests use it; make handout leaves it out)
"""
import shutil
import subprocess
import tempfile
from pathlib import Path

CANDIDATES = ("chromium", "chromium-browser")


def find() -> str | None:
    return next((shutil.which(c) for c in CANDIDATES if shutil.which(c)), None)


def _run(page: Path, *flags, timeout=90) -> subprocess.CompletedProcess:
    exe = find()
    if exe is None:
        raise FileNotFoundError("chromium is not installed (make setup installs it)")
    with tempfile.TemporaryDirectory(prefix="gemmlab-chromium-") as profile:
        return subprocess.run([exe, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                               "--disable-dev-shm-usage", "--no-first-run", f"--user-data-dir={profile}",
                               *flags, page.resolve().as_uri()],
                              capture_output=True, text=True, timeout=timeout)


def screenshot(page: Path, png: Path, width=1200, height=1400) -> Path:
    r = _run(page, f"--window-size={width},{height}", f"--screenshot={png}")
    if not png.is_file():
        raise RuntimeError(f"chromium wrote no screenshot (exit {r.returncode}): {r.stderr[-2000:]}")
    return png


def dump_dom(page: Path) -> str:
    r = _run(page, "--dump-dom")
    if r.returncode != 0 or "<html" not in r.stdout:
        raise RuntimeError(f"chromium --dump-dom failed (exit {r.returncode}): {r.stderr[-2000:]}")
    return r.stdout


def color_pixels(png: Path, rgb: tuple[int, int, int], tolerance=12) -> int:
    """How many pixels of the screenshot are within `tolerance` of the colour `rgb`."""
    from PIL import Image
    img = Image.open(png).convert("RGB")
    r0, g0, b0 = rgb
    return sum(n for n, (r, g, b) in img.getcolors(maxcolors=1 << 24)
               if abs(r - r0) <= tolerance and abs(g - g0) <= tolerance and abs(b - b0) <= tolerance)


def ink_fraction(png: Path) -> float:
    """The share of the screenshot's pixels that are not (nearly) white: about 0 for a blank page."""
    from PIL import Image
    img = Image.open(png).convert("L")
    dark = sum(n for n, v in img.getcolors(maxcolors=256) if v < 240)
    return dark / (img.width * img.height)


def hex_rgb(color: str) -> tuple[int, int, int]:
    color = color.lstrip("#")
    return tuple(int(color[i:i + 2], 16) for i in (0, 2, 4))
