"""The report page in a real browser: headless Chromium loads it with no console error and draws the figures.

Skipped, with the reason, where no Chromium binary is installed (Debian: ``apt-get install chromium``).
The screenshot is read back as pixels: the figures' curves are drawn in #1f77b4, so a rendered
figure puts that colour on the page (1,610 pixels measured) and a page whose SVG does not parse leaves
only the lead's border and legend text (168): the test asks for more than 500.  A script error shows as a
``CONSOLE`` line on Chromium's stderr (checked with a page calling an undefined function).
"""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest
from matplotlib.image import imread

from dpconvex.mechanisms import noisy_gd
from dpconvex.objectives.losses import LogisticLoss

BROWSER = next((path for name in ("chromium", "chromium-browser", "google-chrome")
                if (path := shutil.which(name))), None)

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(BROWSER is None, reason="no Chromium to render the page in "
                                                         "(Debian: apt-get install chromium)")]


def test_chromium_renders_the_report_without_console_errors(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    certificate = noisy_gd(X, y, loss=LogisticLoss(), epsilon=1.0, delta=1e-6, l2_regularization=0.01,
                           random_state=0).certificate
    page, shot = tmp_path / "report.html", tmp_path / "report.png"
    page.write_text(certificate.to_html(), encoding="utf-8")
    run = subprocess.run([BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                          "--enable-logging=stderr", "--v=0", "--window-size=1000,1400", f"--screenshot={shot}",
                          page.as_uri()], capture_output=True, text=True, timeout=120)
    assert shot.exists(), run.stderr[-2000:]
    console = [line for line in run.stderr.splitlines() if "CONSOLE" in line or "Uncaught" in line]
    assert not console, console
    pixels = imread(shot)[..., :3]
    blue = np.all(np.abs(pixels - np.array([0x1F, 0x77, 0xB4]) / 255.0) < 0.08, axis=-1)
    assert blue.sum() > 500, f"{blue.sum()} pixels of the curves' colour: the figures did not render"
