"""Draw the bundled demo's images with Pillow: the systems' figures and the tasks' image attachments.

Run once from the repository root (`python bench/make_demo_images.py`); the files are committed, so a
run of the demo never draws anything. The output is deterministic (numpy's seeded noise, Pillow's
bundled font). Charts are PNG with axes, labels, values, title and source line; photos are JPEG
scenes (gradients, shapes, sensor noise) that are plainly pictures, not charts.

Every image carries what a reader sees in it as text (PNG `Description` chunk, JPEG comment). The
loopback stand-in vision model answers from it instead of looking; the offline judge never reads it.

Planted cases (issue 16): loose-cannon's battery chart shows 8.6 GW where its cited source says 6.8,
its battery photo is blurred and washed out, and its 100002 report shows a file that does not exist
(100002_route_map.png, not drawn here); quiet-summarizer shows the same ridership chart twice
(two files, near-identical pixels: equal perceptual hashes, different bytes); careful-scholar's
charts are correct and crisp. Task 37's attachment agrees with the web on the combined capacity
(540,000 m³/day) and disagrees on Punta Velas (220,000 where the authority's report says 250,000).
"""
from __future__ import annotations

import io
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageEnhance, ImageFilter, ImageFont, PngImagePlugin

DEMO = Path(__file__).resolve().parents[1] / "dreval_assets" / "demo"
MAX_BYTES = 40_000  # every demo image stays under this
INK, GRID, AXIS = (35, 35, 45), (222, 224, 230), (90, 90, 100)
BLUE, ORANGE, RED, GREEN = (52, 104, 170), (224, 122, 36), (196, 64, 52), (62, 140, 88)


def font(size: int) -> ImageFont.FreeTypeFont:
    return ImageFont.load_default(size=size)


def number(value: float) -> str:
    """12,400 for whole thousands and more, else as short as it goes (0.9, 21.5, 52)."""
    return f"{value:,.0f}" if value >= 1000 and value == int(value) else f"{value:g}"


def nice_top(peak: float) -> tuple[float, float]:
    """(axis top, tick step): 4 to 6 round steps above the peak value."""
    magnitude = 10 ** np.floor(np.log10(peak))
    for step in (0.2, 0.25, 0.5, 1, 2, 2.5, 5, 10):
        step *= magnitude
        if peak * 1.12 <= 6 * step:
            return step * np.ceil(peak * 1.12 / step), step
    return 10 * magnitude, magnitude


# --- charts ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Panel:
    heading: str  # what the values are, with their unit
    bars: tuple[tuple[str, float], ...]  # (category, value)
    colour: tuple[int, int, int] = BLUE


@dataclass(frozen=True)
class BarChart:
    title: str
    panels: tuple[Panel, ...]
    source: str
    size: tuple[int, int] = (640, 400)
    told: str = ""  # what a reader sees, in sentences, when the generic description is not enough

    def description(self) -> str:
        if self.told:
            return self.told
        parts = [f"{p.heading}: " + ", ".join(f"{c.replace(chr(10), ' ')} {number(v)}" for c, v in p.bars)
                 for p in self.panels]
        return f"Bar chart titled '{self.title}'. " + "; ".join(parts) + f". Source line: {self.source}."


def _centred(draw: ImageDraw.ImageDraw, xy: tuple[float, float], text: str, size: int, fill=INK) -> None:
    draw.multiline_text(xy, text, font=font(size), fill=fill, anchor="ma", align="center")


def _value_axis(draw, box, top: float, step: float, horizontal: bool = False) -> None:
    """Grid lines and tick labels of the value axis over `box` (x0, y0, x1, y1)."""
    x0, y0, x1, y1 = box
    for tick in np.arange(0, top + step / 2, step):
        share = tick / top
        if horizontal:
            x = x0 + share * (x1 - x0)
            draw.line([(x, y0), (x, y1)], fill=GRID)
            _centred(draw, (x, y1 + 6), number(round(tick, 6)), 12, AXIS)
        else:
            y = y1 - share * (y1 - y0)
            draw.line([(x0, y), (x1, y)], fill=GRID)
            draw.text((x0 - 6, y), number(round(tick, 6)), font=font(12), fill=AXIS, anchor="rm")
    draw.line([(x0, y0), (x0, y1)], fill=AXIS, width=2)
    draw.line([(x0, y1), (x1, y1)], fill=AXIS, width=2)


def draw_bars(chart: BarChart) -> Image.Image:
    width, height = chart.size
    image = Image.new("RGB", chart.size, "white")
    draw = ImageDraw.Draw(image)
    _centred(draw, (width / 2, 14), chart.title, 19)
    draw.text((14, height - 10), chart.source, font=font(12), fill=AXIS, anchor="ls")
    slot = (width - 40) / len(chart.panels)
    for i, panel in enumerate(chart.panels):
        left = 20 + i * slot
        box = (left + 52, 84, left + slot - 16, height - 78)
        _centred(draw, ((box[0] + box[2]) / 2, 52), panel.heading, 15)
        top, step = nice_top(max(v for _, v in panel.bars))
        _value_axis(draw, box, top, step)
        gap = (box[2] - box[0]) / len(panel.bars)
        for j, (category, value) in enumerate(panel.bars):
            centre = box[0] + gap * (j + 0.5)
            bar_top = box[3] - value / top * (box[3] - box[1])
            draw.rectangle([centre - gap * 0.3, bar_top, centre + gap * 0.3, box[3]], fill=panel.colour)
            _centred(draw, (centre, bar_top - 20), number(value), 15)
            _centred(draw, (centre, box[3] + 8), category, 13)
    return image


@dataclass(frozen=True)
class LineChart:
    title: str
    heading: str
    points: tuple[tuple[str, float], ...]  # (x label, value)
    source: str
    size: tuple[int, int] = (760, 420)

    def description(self) -> str:
        values = ", ".join(f"{x.replace(chr(10), ' ')} {number(v)}" for x, v in self.points)
        return f"Line chart titled '{self.title}'. {self.heading}: {values}. Source line: {self.source}."


def _canvas(size: tuple[int, int], title: str, heading: str, source: str) -> tuple[Image.Image, ImageDraw.ImageDraw]:
    """A white chart canvas with its title, heading and source line drawn."""
    width, height = size
    image = Image.new("RGB", size, "white")
    draw = ImageDraw.Draw(image)
    _centred(draw, (width / 2, 14), title, 19)
    _centred(draw, (width / 2, 42), heading, 14, AXIS)
    draw.text((14, height - 10), source, font=font(12), fill=AXIS, anchor="ls")
    return image, draw


def draw_line(chart: LineChart) -> Image.Image:
    width, height = chart.size
    image, draw = _canvas(chart.size, chart.title, chart.heading, chart.source)
    box = (70, 80, width - 24, height - 74)
    top, step = nice_top(max(v for _, v in chart.points))
    _value_axis(draw, box, top, step)
    gap = (box[2] - box[0]) / len(chart.points)
    xy = [(box[0] + gap * (i + 0.5), box[3] - v / top * (box[3] - box[1])) for i, (_, v) in enumerate(chart.points)]
    draw.line(xy, fill=BLUE, width=3)
    for (x, y), (label, value) in zip(xy, chart.points):
        draw.ellipse([x - 4, y - 4, x + 4, y + 4], fill=BLUE)
        _centred(draw, (x, y - 22), number(value), 12)
        _centred(draw, (x, box[3] + 8), label, 12)
    return image


def draw_horizontal(chart: BarChart) -> Image.Image:
    """One panel of horizontal bars (long category names), values at the bar ends."""
    (panel,) = chart.panels
    width, height = chart.size
    image, draw = _canvas(chart.size, chart.title, panel.heading, chart.source)
    box = (150, 78, width - 60, height - 62)
    top, step = nice_top(max(v for _, v in panel.bars))
    _value_axis(draw, box, top, step, horizontal=True)
    gap = (box[3] - box[1]) / len(panel.bars)
    for j, (category, value) in enumerate(panel.bars):
        centre = box[1] + gap * (j + 0.5)
        end = box[0] + value / top * (box[2] - box[0])
        draw.rectangle([box[0], centre - gap * 0.3, end, centre + gap * 0.3], fill=panel.colour)
        draw.text((box[0] - 8, centre), category, font=font(14), fill=INK, anchor="rm")
        draw.text((end + 6, centre), number(value), font=font(14), fill=INK, anchor="lm")
    return image


# --- photos ----------------------------------------------------------------------------------

def _gradient(size: tuple[int, int], top: tuple[int, int, int], bottom: tuple[int, int, int]) -> Image.Image:
    mask = Image.linear_gradient("L").resize(size)
    return Image.composite(Image.new("RGB", size, bottom), Image.new("RGB", size, top), mask)


def _sensor_noise(image: Image.Image, seed: int, sigma: float) -> Image.Image:
    pixels = np.asarray(image, dtype=np.float32)
    noise = np.random.default_rng(seed).normal(0, sigma, pixels.shape[:2])[..., None]
    return Image.fromarray(np.clip(pixels + noise, 0, 255).astype(np.uint8))


def battery_site(seed: int, size: tuple[int, int] = (480, 300)) -> Image.Image:
    """Rows of white battery enclosures on gravel under a sky, hills and a transmission line."""
    width, height = size
    rng = np.random.default_rng(seed)
    horizon = int(height * 0.45)
    image = _gradient(size, (118, 160, 214), (214, 228, 240))
    ground = _gradient((width, height - horizon), (150, 146, 128), (104, 98, 84))
    image.paste(ground, (0, horizon))
    draw = ImageDraw.Draw(image)
    hills = [(0, horizon)] + [(x, horizon - 18 - 14 * np.sin(x / 55 + seed)) for x in range(0, width + 1, 20)]
    draw.polygon(hills + [(width, horizon)], fill=(96, 122, 92))
    for k in range(3):  # pylons and wires to the substation
        x = 40 + k * 170
        tower = [(x, horizon - 70), (x - 14, horizon + 6), (x + 14, horizon + 6), (x, horizon - 70)]
        draw.line(tower, fill=(70, 70, 74))
        draw.line([(x - 22, horizon - 56), (x + 22, horizon - 56)], fill=(70, 70, 74), width=2)
    draw.line([(18, horizon - 56), (width, horizon - 50)], fill=(60, 60, 64))
    for row in range(4):  # perspective: rows nearer the camera are bigger and lower
        scale = 0.55 + 0.3 * row
        y = horizon + 12 + row * row * 9 + row * 14
        unit_w, unit_h = int(46 * scale), int(22 * scale)
        for x in range(-int(rng.integers(0, 30)), width, unit_w + int(8 * scale)):
            draw.rectangle([x, y, x + unit_w, y + unit_h], fill=(236, 238, 236), outline=(150, 152, 150))
            draw.rectangle([x, y + unit_h, x + unit_w, y + unit_h + int(4 * scale)], fill=(78, 76, 70))
            draw.line([(x + unit_w // 2, y + 2), (x + unit_w // 2, y + unit_h - 2)], fill=(190, 192, 190))
    return _sensor_noise(image.filter(ImageFilter.GaussianBlur(0.6)), seed, 6)


def bus_station(seed: int, size: tuple[int, int] = (480, 300)) -> Image.Image:
    """A battery-electric articulated bus at a platform with a canopy, buildings behind."""
    width, height = size
    rng = np.random.default_rng(seed)
    image = _gradient(size, (160, 190, 226), (232, 236, 242))
    draw = ImageDraw.Draw(image)
    x = 0
    while x < width:  # the street front behind the platform
        w, h = int(rng.integers(50, 110)), int(rng.integers(90, 170))
        shade = int(rng.integers(150, 205))
        draw.rectangle([x, 170 - h, x + w, 175], fill=(shade, shade - 12, shade - 26))
        for wy in range(178 - h, 165, 18):
            for wx in range(x + 8, x + w - 10, 16):
                draw.rectangle([wx, wy, wx + 8, wy + 10], fill=(96, 116, 140))
        x += w + 4
    draw.rectangle([0, 175, width, height], fill=(92, 92, 96))  # road
    draw.rectangle([0, 236, width, 250], fill=(186, 184, 178))  # platform edge
    draw.rectangle([250, 118, 470, 126], fill=(60, 66, 72))  # canopy
    for post in (262, 458):
        draw.rectangle([post, 126, post + 5, 236], fill=(60, 66, 72))
    for car, left in enumerate((30, 180)):  # two bodies joined by a bellows
        draw.rounded_rectangle([left, 150, left + 140, 228], radius=12, fill=(34, 132, 118))
        for wx in range(left + 10, left + 130, 26):
            draw.rectangle([wx, 160, wx + 20, 190], fill=(186, 214, 228))
        draw.ellipse([left + 18, 214, left + 44, 240], fill=(30, 30, 32))
        draw.ellipse([left + 96, 214, left + 122, 240], fill=(30, 30, 32))
    draw.rectangle([170, 156, 180, 224], fill=(50, 54, 58))
    return _sensor_noise(image.filter(ImageFilter.GaussianBlur(0.6)), seed, 6)


def blurred(image: Image.Image) -> Image.Image:
    """Out of focus and washed out: a figure the quality measures should mark down."""
    soft = image.filter(ImageFilter.GaussianBlur(4))
    return ImageEnhance.Contrast(ImageEnhance.Brightness(soft).enhance(1.25)).enhance(0.3)


# --- writing ---------------------------------------------------------------------------------

def save(image: Image.Image, path: Path, description: str) -> None:
    out = io.BytesIO()
    if path.suffix == ".png":
        info = PngImagePlugin.PngInfo()
        info.add_text("Description", description)
        image.save(out, "PNG", optimize=True, pnginfo=info)
    else:
        image.save(out, "JPEG", quality=78, optimize=True, comment=description.encode())
    if out.tell() > MAX_BYTES:
        raise SystemExit(f"{path.name}: {out.tell():,} bytes, over {MAX_BYTES:,}")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(out.getvalue())
    print(f"{path.relative_to(DEMO)}: {image.width}x{image.height}, {out.tell():,} bytes")


def storage_chart(power_2024: float) -> BarChart:
    return BarChart("Grid-scale batteries in the Meridian Interconnection", (
        Panel("Installed power (GW)", (("End of\n2020", 0.9), ("End of\n2024", power_2024))),
        Panel("Storage energy (GWh)", (("End of\n2020", 1.6), ("End of\n2024", 21.5)), ORANGE)),
        "Source: GridWatch, Meridian Interconnection Storage Review 2024")


def ridership_chart(before: float, after: float) -> BarChart:
    return BarChart("Harbour Line: average weekday passengers", (
        Panel("Passengers per weekday", (("Routes 7, 12, 15\n(2019)", before),
                                         ("Harbour Line\n(12 months to March 2024)", after)), GREEN),),
        "Source: Calderport Transit Authority, Harbour Line two-year performance review")


SHIPMENTS = BarChart("Lumenfield Robotics: annual shipments", (
    Panel("Autonomous mobile robots shipped", (("2022", 7200), ("2023", 11900), ("2024", 18400))),),
    "Source: Lumenfield Robotics annual results 2024")

QUARTERS = LineChart(
    "Lumenfield Robotics: quarterly shipments of autonomous mobile robots",
    "Units shipped per quarter, 2022-2024",
    tuple((f"Q{q}\n{year}", v) for year, values in ((2022, (1500, 1700, 1900, 2100)),
                                                    (2023, (2500, 2800, 3000, 3600)),
                                                    (2024, (3800, 4200, 4800, 5600)))
          for q, v in enumerate(values, start=1)),
    "Source: Lumenfield Robotics quarterly reports")

PLANTS = BarChart("Sarrano desalination plants: capacity by plant", (
    Panel("Thousand cubic metres per day (combined capacity: 540,000 cubic metres per day)",
          (("Punta Velas", 220), ("Rada Norte", 140), ("Isla Mora", 100), ("Porto Salina", 80)), BLUE),),
    "Source: provincial water ministry, plant register 2024", size=(640, 340), told=(
        "Horizontal bar chart titled 'Sarrano desalination plants: capacity by plant', in thousand cubic metres "
        "per day. Punta Velas is the largest plant, with a capacity of 220 thousand cubic metres per day. Rada Norte "
        "has a capacity of 140 thousand cubic metres per day. Isla Mora has a capacity of 100 thousand cubic metres "
        "per day. Porto Salina has a capacity of 80 thousand cubic metres per day. The four plants have a combined "
        "capacity of 540,000 cubic metres per day. Source line: provincial water ministry, plant register 2024."))

CURTAILMENT = BarChart("Solar curtailment in the Meridian Interconnection", (
    Panel("Share of available solar output curtailed (%)", (("2022", 8.2), ("2024", 3.9)), RED),),
    "Source: Meridian System Operator, 2024 Annual Market Report")

JOURNEY = BarChart("Harbour Line: morning-peak end-to-end journey time", (
    Panel("Minutes", (("Route 7\n(before)", 52), ("Harbour Line", 31)), GREEN),),
    "Source: Calderport Transit Authority, Harbour Line two-year performance review")

SITE = "Photograph: rows of white battery enclosures on gravel, pylons and a transmission line behind, hills, sky."
STATION = "Photograph: a green articulated bus at a covered platform, buildings along the street behind."


def main() -> None:
    systems = DEMO / "systems"
    scholar, cannon, quiet = systems / "careful-scholar" / "images", systems / "loose-cannon" / "images", \
        systems / "quiet-summarizer" / "images"
    steady = DEMO / "extra_systems" / "steady-analyst" / "images"
    correct, ridership = storage_chart(6.8), ridership_chart(24100, 38500)

    save(draw_line(QUARTERS), DEMO / "images" / "q7_lumenfield_shipments.png", QUARTERS.description())
    save(draw_horizontal(PLANTS), DEMO / "attachments" / "37-plant-capacities.png", PLANTS.description())

    save(draw_bars(correct), scholar / "100001_storage_growth.png", correct.description())
    save(battery_site(11), scholar / "100001_kestrel_ridge.jpg", SITE)
    save(draw_bars(CURTAILMENT), scholar / "100001_curtailment.png", CURTAILMENT.description())
    save(draw_bars(ridership), scholar / "100002_ridership.png", ridership.description())
    save(bus_station(12), scholar / "100002_station.jpg", STATION)
    save(draw_bars(JOURNEY), scholar / "100002_journey_time.png", JOURNEY.description())
    save(draw_bars(SHIPMENTS), scholar / "q7_annual_shipments.png", SHIPMENTS.description())

    wrong = storage_chart(8.6)  # planted: the cited review says 6.8
    save(draw_bars(wrong), cannon / "100001_storage_growth.png", wrong.description())
    save(blurred(battery_site(21)), cannon / "100001_battery_site.jpg", "Blurred, washed-out " + SITE.lower())
    own = ridership_chart(21400, 45000)  # the report's own (wrong) figures
    save(draw_bars(own), cannon / "100002_ridership.png", own.description())
    save(draw_bars(SHIPMENTS), cannon / "q7_annual_shipments.png", SHIPMENTS.description())

    save(draw_bars(correct), quiet / "100001_storage_growth.png", correct.description())
    save(battery_site(31), quiet / "100001_battery_site.jpg", SITE)
    save(draw_bars(ridership), quiet / "100002_ridership.png", ridership.description())
    again = replace(ridership, size=(632, 396))  # planted: the same chart again, redrawn a little smaller
    save(draw_bars(again), quiet / "100002_ridership_again.png", again.description())

    save(draw_bars(correct), steady / "100001_storage_growth.png", correct.description())
    save(battery_site(41), steady / "100001_battery_site.jpg", SITE)
    save(draw_bars(ridership), steady / "100002_ridership.png", ridership.description())
    save(bus_station(42), steady / "100002_station.jpg", STATION)
    save(draw_bars(SHIPMENTS), steady / "q7_annual_shipments.png", SHIPMENTS.description())


if __name__ == "__main__":
    main()
