"""An image is decoded once per process: `report_images`' measure also leaves its background share (the
photo-or-chart cue TVIR and MOSAIC read) for the judge step, for bytes a judge is sent unchanged; a
downscaled image's share is left to be measured from the bytes the judge is sent."""
import io

from PIL import Image, ImageDraw

from dreval_assets.core import images


def png(size=(320, 200), seed=1) -> bytes:
    image = Image.new("RGB", size, "white")
    draw = ImageDraw.Draw(image)
    for i in range(4):
        draw.rectangle([40 + i * 60, 40 + seed * i, 80 + i * 60, 180], fill=(30, 90 + seed, 200))
    out = io.BytesIO()
    image.save(out, "PNG")
    return out.getvalue()


def test_the_share_comes_with_the_measure_and_is_the_share_measured_afresh(monkeypatch):
    data = png(seed=7)
    expected = images._measured_background_share(data)
    measured = images.measure(data)
    monkeypatch.setattr(images, "_measured_background_share", lambda *_: (_ for _ in ()).throw(AssertionError))
    judge_bytes, _ = images.for_judge(data)
    assert judge_bytes == data  # small PNG: sent as it is
    assert images.background_share(judge_bytes, measured.sha256) == expected  # no second decode


def test_a_downscaled_images_share_is_measured_from_what_the_judge_is_sent():
    data = png(size=(2400, 1500), seed=11)
    measured = images.measure(data)
    judge_bytes, _ = images.for_judge(data)
    assert judge_bytes != data and measured.sha256 not in images._BACKGROUND_SHARES
    assert images.background_share(judge_bytes, measured.sha256) == images._measured_background_share(judge_bytes)
