"""`kerntune report` as a person sees it (CTest report.screenshot, label report): the committed
predicted tuning results (predicted_tuning.csv, written by make_predicted_tuning.sh) are imported
into a fresh database, the report rendered, and headless Chromium screenshots the page. The page
must be self-contained (every image a data: URI, no script, nothing fetched) and the screenshot
must show the plots: not blank, heatmap pixels (viridis) and the orange of predicted times. The
same check on the page with its images removed must fail, so that it can.

    python3 check_report_screenshot.py KERNTUNE_BINARY PREDICTED_TUNING_CSV

Run by a python3 that imports matplotlib (tests/CMakeLists.txt picks it); exits 77 (skipped)
without matplotlib or Chromium, 1 on a failed check.
"""
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile

SKIP = 77
WINDOW = (1400, 2400)
TAB_ORANGE = (255, 127, 14)  # matplotlib's "tab:orange", the report's colour of predicted times

# What a screenshot of the report must hold, in pixels of the WINDOW-sized PNG. Its heatmaps cover
# some 140 000 viridis pixels and its marks of predicted times some 65 000 orange ones; the page
# without its images has none of either (and only 5% of it is not white: its text and the banner).
MIN_NON_WHITE_FRACTION = 0.10
MIN_VIRIDIS_PIXELS = 20000
MIN_ORANGE_PIXELS = 4000


def fail(message):
    print(f"report.screenshot: FAILED: {message}", file=sys.stderr)
    sys.exit(1)


def chromium():
    for name in (os.environ.get("KT_CHROMIUM"), "chromium", "chromium-browser", "google-chrome"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


def run(command, **kwargs):
    result = subprocess.run(command, capture_output=True, text=True, timeout=300, **kwargs)
    if result.returncode != 0:
        fail(f"{' '.join(command)} exited {result.returncode}:\n{result.stdout}{result.stderr}")
    return result


def screenshot(browser, html_path, png_path, profile):
    run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
         f"--user-data-dir={profile}", f"--window-size={WINDOW[0]},{WINDOW[1]}",
         f"--screenshot={png_path}", "file://" + os.path.abspath(html_path)])
    if not os.path.exists(png_path):
        fail(f"Chromium wrote no screenshot {png_path}")


def plot_pixels(png_path):
    """The screenshot's non-white fraction and its counts of viridis and tab:orange pixels."""
    import numpy as np
    from matplotlib import colormaps, image
    rgb = np.rint(image.imread(png_path)[..., :3] * 255).astype(np.int32)
    if rgb.shape[:2] != (WINDOW[1], WINDOW[0]):
        fail(f"the screenshot is {rgb.shape[1]}x{rgb.shape[0]}, not {WINDOW[0]}x{WINDOW[1]}")
    saturation = rgb.max(axis=2) - rgb.min(axis=2)
    # A pixel is viridis when its colour falls in a bin (8 levels a channel) that a sample of the
    # colour map falls in, and it is saturated (grey text and white paper are not).
    samples = np.rint(colormaps["viridis"](np.linspace(0, 1, 256))[:, :3] * 255).astype(np.int32)
    bins = np.zeros(512, dtype=bool)
    bins[(samples[:, 0] >> 5) * 64 + (samples[:, 1] >> 5) * 8 + (samples[:, 2] >> 5)] = True
    viridis = bins[(rgb[..., 0] >> 5) * 64 + (rgb[..., 1] >> 5) * 8 + (rgb[..., 2] >> 5)]
    orange = np.abs(rgb - np.array(TAB_ORANGE)).max(axis=2) <= 20
    return {"non_white_fraction": float((rgb.min(axis=2) < 245).mean()),
            "viridis": int((viridis & (saturation >= 60)).sum()),
            "orange": int(orange.sum())}


def shows_plots(counts):
    return (counts["non_white_fraction"] >= MIN_NON_WHITE_FRACTION and
            counts["viridis"] >= MIN_VIRIDIS_PIXELS and counts["orange"] >= MIN_ORANGE_PIXELS)


def check_page(page):
    images = re.findall(r"<img [^>]*>", page)
    if len(images) < 3:
        fail(f"the page holds {len(images)} images, fewer than a ratio panel, a roofline and a "
             "problem's plots")
    for tag in images:
        if 'src="data:image/png;base64,' not in tag:
            fail(f"an image that is not an embedded PNG: {tag[:120]}")
    for needle in ("<script", "<link", 'src="http', "src='http", "url(http"):
        if needle in page:
            fail(f"the page is not self-contained: it holds {needle}")
    for needle in ("PREDICTED: this database holds no measurement", "no baseline timing",
                   "gemm:bf16:bf16:nt:2048x2048x2048", "attn:bf16:b2.hq16.hkv16"):
        if needle not in page:
            fail(f"the page lacks '{needle}'")


def main():
    kerntune, csv = sys.argv[1], sys.argv[2]
    if importlib.util.find_spec("matplotlib") is None:
        print("report.screenshot: skipped: this python3 has no matplotlib "
              "(apt-get install python3-matplotlib)")
        return SKIP
    browser = chromium()
    if browser is None:
        print("report.screenshot: skipped: no Chromium (apt-get install chromium)")
        return SKIP
    with tempfile.TemporaryDirectory(prefix="kt_report_") as scratch:
        db = os.path.join(scratch, "predicted.db")
        page_path = os.path.join(scratch, "report.html")
        env = dict(os.environ, KERNTUNE_PYTHON=sys.executable,
                   KERNTUNE_CUDA_DRIVER="/nonexistent/libcuda.so.1")
        run([kerntune, "cache", "import", "--db", db, csv], env=env)
        run([kerntune, "report", "--db", db, "--out", page_path], env=env)
        with open(page_path, encoding="utf-8") as f:
            page = f.read()
        check_page(page)

        shot = os.path.join(scratch, "report.png")
        screenshot(browser, page_path, shot, os.path.join(scratch, "profile"))
        counts = plot_pixels(shot)
        if not shows_plots(counts):
            fail(f"the screenshot does not show the plots: {counts}")

        # The control: the same page without its images must fail the same check.
        bare_path = os.path.join(scratch, "bare.html")
        with open(bare_path, "w", encoding="utf-8") as f:
            f.write(re.sub(r"<img [^>]*>", "", page))
        bare_shot = os.path.join(scratch, "bare.png")
        screenshot(browser, bare_path, bare_shot, os.path.join(scratch, "profile"))
        bare_counts = plot_pixels(bare_shot)
        if shows_plots(bare_counts):
            fail(f"the check passes a page without images, so it cannot fail: {bare_counts}")
        print(f"report.screenshot: the report shows its plots {counts}; without its images "
              f"{bare_counts}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
