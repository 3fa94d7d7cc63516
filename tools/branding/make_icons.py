"""Draws Keyframe's icon and writes every PNG size the app serves (run from the repo root).

    .venv/bin/python tools/branding/make_icons.py

The mark: a white keyframe diamond on a timeline between two ordinary frames,
on the privacy bar's teal. Drawn 4x larger and scaled down, so edges are smooth.
Writes:
  assets/icon.png                       1024, what `flet build` takes for every platform
  assets/favicon.png                    32, the browser tab
  assets/icons/favicon-64.png           64, high-density tabs
  assets/icons/keyframe-{192,512}.png   rounded square on transparent, the web manifest
  assets/icons/keyframe-maskable-{192,512}.png  full bleed, content inside the 80 % safe zone
  assets/icons/apple-touch-icon-180.png full bleed (iOS rounds it itself)
"""

from __future__ import annotations

from pathlib import Path

from PIL import Image, ImageDraw

ROOT = Path(__file__).resolve().parents[2]
ASSETS = ROOT / "assets"
TEAL = (0, 105, 92, 255)  # Material teal 800, the colour of the app's privacy bar
WHITE = (255, 255, 255, 255)
SUPER = 4


def draw(size: int, *, full_bleed: bool, scale: float = 1.0) -> Image.Image:
    """The mark at `size` px; `scale` shrinks the white figure (maskable icons keep it in the safe zone)."""
    big = size * SUPER
    img = Image.new("RGBA", (big, big), (0, 0, 0, 0))
    d = ImageDraw.Draw(img)
    if full_bleed:
        d.rectangle((0, 0, big, big), fill=TEAL)
    else:
        d.rounded_rectangle((0, 0, big - 1, big - 1), radius=round(big * 0.22), fill=TEAL)

    c = big / 2
    u = big * scale  # figure unit

    def box(cx: float, cy: float, r: float) -> tuple[float, float, float, float]:
        return (cx - r, cy - r, cx + r, cy + r)

    # The timeline.
    half = max(0.045 * u, 1.5 * SUPER) / 2  # at least 1.5 px wide in a favicon
    d.rounded_rectangle((c - 0.40 * u, c - half, c + 0.40 * u, c + half), radius=half, fill=WHITE)
    # Two ordinary frames on it.
    for dx in (-0.31 * u, 0.31 * u):
        d.ellipse(box(c + dx, c, 0.05 * u), fill=WHITE)
    # The keyframe: a diamond on the line.
    r = 0.18 * u
    d.polygon([(c, c - r), (c + r, c), (c, c + r), (c - r, c)], fill=WHITE)
    return img.resize((size, size), Image.Resampling.LANCZOS)


def main() -> None:
    icons = ASSETS / "icons"
    icons.mkdir(parents=True, exist_ok=True)
    outputs = {
        ASSETS / "icon.png": draw(1024, full_bleed=False),
        ASSETS / "favicon.png": draw(32, full_bleed=False, scale=1.15),
        icons / "favicon-64.png": draw(64, full_bleed=False, scale=1.1),
        icons / "keyframe-192.png": draw(192, full_bleed=False),
        icons / "keyframe-512.png": draw(512, full_bleed=False),
        icons / "keyframe-maskable-192.png": draw(192, full_bleed=True, scale=0.8),
        icons / "keyframe-maskable-512.png": draw(512, full_bleed=True, scale=0.8),
        icons / "apple-touch-icon-180.png": draw(180, full_bleed=True, scale=0.9),
    }
    for path, img in outputs.items():
        img.save(path, optimize=True)
        print(f"{path.relative_to(ROOT)}  {img.width}x{img.height}")


if __name__ == "__main__":
    main()
