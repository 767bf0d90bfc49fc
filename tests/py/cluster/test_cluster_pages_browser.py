"""The staff tools' HTML pages opened in a real browser (headless Chromium): the similarity index and
the leaderboard of a small synthetic class. The DOM after loading must hold the tables (with the
right rows) and the plot; the screenshot must be a real rendering — not blank — with the plot's own
colours on it (the leaderboard's bars, the similarity plot's flagged pair)."""
import json

import pytest

from support import browser
from support import staff_class

pytestmark = pytest.mark.skipif(browser.find() is None,
                                reason="chromium is not installed (make setup installs it): pages not opened in a browser")

import leaderboard  # noqa: E402  (cluster/, on sys.path through staff_class)
import similarity  # noqa: E402
import gradebook  # noqa: E402
import class_files  # noqa: E402


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    pytest.importorskip("copydetect", reason="copydetect is not installed: `make setup` installs it")
    base = tmp_path_factory.mktemp("pages")
    (base / "aliases.toml").write_text('ana = "Tile Twister"\nben = "warp-speed"\ncat = "bank-conflict-free"\n')
    cfg = staff_class.load(staff_class.write_config(base, '[leaderboard]\naliases = "aliases.toml"\n',
                                                    roster=["ana", "ben", "cat"]))
    staff_class.hand_in(cfg, base, "ana", {"tiled": "tiled_textbook"})
    staff_class.hand_in(cfg, base, "ben", {"tiled": "tiled_textbook_copied"})
    staff_class.hand_in(cfg, base, "cat", {"tiled": "tiled_pointer_walk"})
    sweep = staff_class.plan(cfg)
    for student, gflops in (("ana", 900.0), ("ben", 1500.0), ("cat", 1200.0)):
        staff_class.write_grade(sweep, student, staff_class.full_rows(
            speeds={("reuse", "float"): gflops, ("reuse", "double"): gflops / 2}))
    similarity.run(cfg, sweep, staff_class.STAGE_FILES, say=lambda *_: None)
    rows, _ = gradebook.build(sweep, staff_class.STAGES)
    aliases = class_files.load_aliases(cfg, {"ana", "ben", "cat"}, "test")
    leaderboard.write(sweep, rows, aliases, ["reuse", "tensor"], 10, "Leaderboard: pages")
    return sweep


def test_leaderboard_page_in_a_browser(pages, tmp_path):
    page = pages / "leaderboard" / "leaderboard.html"
    dom = browser.dump_dom(page)
    fp32 = dom.split('id="board-reuse-float"')[1].split("</table>")[0]
    assert [c.split("</td>")[0] for c in fp32.split("<td>")[1:] if not c[0].isdigit()][:3] == \
        ["warp-speed", "bank-conflict-free", "Tile Twister"]
    assert 'id="board-reuse-double"' in dom and 'id="leaderboard-plot"' in dom
    png = browser.screenshot(page, tmp_path / "leaderboard.png", height=900)
    assert browser.ink_fraction(png) > 0.01                        # a rendering, not a blank page
    bars = browser.color_pixels(png, browser.hex_rgb(leaderboard.BAR_COLOR))
    assert bars > 5000, f"only {bars} pixels of the bars' colour: the plot did not render"


def test_similarity_index_in_a_browser(pages, tmp_path):
    page = pages / "similarity" / "index.html"
    dom = browser.dump_dom(page)
    tiled = dom.split('id="pairs-tiled-1"')[1].split("</table>")[0]
    first = tiled.split("<tr")[2]  # header row, then the most similar pair of the first group
    assert 'class="flag"' in first and "<td>ana</td><td>ben</td>" in first
    assert 'id="similarity-plot"' in dom and 'href="tiled/ana--ben.html"' in dom
    png = browser.screenshot(page, tmp_path / "similarity.png", height=900)
    assert browser.ink_fraction(png) > 0.01
    flagged = browser.color_pixels(png, browser.hex_rgb(similarity.FLAG_COLOR), tolerance=20)
    assert flagged > 100, f"only {flagged} pixels of the flagged pair's colour: the plot did not render"
    # Five unflagged pairs (ana, ben and cat with cat and the reference), drawn half transparent: a
    # lone dot has the half tone over white, dots that overlap go darker towards the full colour.
    # (copydetect's scores move a little between runs, and with them which dots overlap.)
    full = browser.hex_rgb(similarity.PAIR_COLOR)
    half = tuple(round((c + 255) / 2) for c in full)
    pairs = browser.color_pixels(png, full, tolerance=40) + browser.color_pixels(png, half, tolerance=20)
    assert pairs > 40, pairs


def test_pair_page_opens(pages):
    """The flagged pair's own side-by-side page loads and shows both files, the shared code highlighted."""
    dom = browser.dump_dom(pages / "similarity" / "tiled" / "ana--ben.html")
    assert "/ana+" in dom and "/ben+" in dom and "highlight-red" in dom and "highlight-green" in dom
    assert json.loads((pages / "plan.json").read_text())["students"][0]["student"] == "ana"
