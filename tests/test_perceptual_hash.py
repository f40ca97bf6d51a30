"""The perceptual hash behind TVIR's duplicate penalty (core/images.perceptual_hash): the 64-bit pHash
(grey 32 x 32, DCT-II, the 8 x 8 lowest frequencies against their median), the same hex digits ImageHash
4.3.2's `phash` gives (compared on 370 images, flat ones included, when it was replaced), without scipy."""
import io

import pytest
from PIL import Image, ImageDraw

from dreval_assets.core import images


def chart(values=(3, 5, 8, 6), size=(320, 200)) -> Image.Image:
    image = Image.new("RGB", size, "white")
    draw = ImageDraw.Draw(image)
    draw.line([(30, 10), (30, 180), (310, 180)], fill="black", width=2)
    for i, value in enumerate(values):
        draw.rectangle([50 + i * 60, 180 - value * 18, 90 + i * 60, 180], fill=(30, 90, 200))
    return image


def phash(image: Image.Image) -> str:
    return images.perceptual_hash(images._grey(image))


def test_a_chart_hashes_as_imagehash_did():
    assert phash(chart()) == "eec4953bd16e8464"  # ImageHash 4.3.2's phash of the same grey image


@pytest.mark.parametrize("colour, expected", [((255, 255, 255), "8000000000000000"), ((128, 10, 200), "8000000000000000"),
                                               ((0, 0, 0), "0000000000000000")])
def test_a_flat_image_has_at_most_its_mean_above_the_median(colour, expected):
    """Every coefficient but the mean is zero (black: that one too): rounding noise must not decide the
    other 63 bits."""
    assert phash(Image.new("RGB", (300, 200), colour)) == expected


def test_the_same_figure_resized_or_recompressed_is_a_duplicate_and_another_chart_is_not():
    original = phash(chart())
    jpeg = io.BytesIO()
    chart().save(jpeg, "JPEG", quality=60)
    assert images.hash_distance(original, phash(chart().resize((640, 400)))) <= images.DUPLICATE_DISTANCE
    assert images.hash_distance(original, phash(Image.open(io.BytesIO(jpeg.getvalue())))) <= images.DUPLICATE_DISTANCE
    assert images.hash_distance(original, phash(chart((8, 2, 7, 1)))) > images.DUPLICATE_DISTANCE
    assert images.near_duplicates([original, phash(chart((8, 2, 7, 1))), phash(chart().resize((640, 400)))]) == [
        None, None, 0]


def test_the_distance_counts_differing_bits():
    assert images.hash_distance("ffff000000000000", "0fff000000000001") == 5
    assert images.hash_distance("eec4953bd16e8464", "eec4953bd16e8464") == 0
