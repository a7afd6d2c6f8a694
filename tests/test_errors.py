"""The engine's coded errors: only known codes, each with a message in both languages."""
import pytest

from sim.core import upload
from sim.core.errors import CodedError
from sim.gpu import measure as gpu
from sim.gpu import memsim
from sim.transformers import shapes
from ui.i18n import catalogue


@pytest.mark.parametrize("cls", [upload.UploadError, shapes.ShapeError, memsim.MemsimError])
def test_unknown_codes_are_refused(cls):
    assert issubclass(cls, CodedError)
    e = cls(cls.CODES[0], {"n": 1})
    assert e.code == cls.CODES[0] and e.params == {"n": 1}
    with pytest.raises(ValueError, match="no code"):
        cls("no_such_code")


def test_upload_and_shape_codes_have_messages_in_both_languages():
    for lang in ("en", "zh"):
        cat = catalogue(lang)
        assert all(f"upload.{c}" in cat for c in upload.ERROR_CODES)
        assert all(f"shp.error.{c}" in cat for c in shapes.ERROR_CODES)
    assert gpu.ERROR_CODES and memsim.ERROR_CODES  # messages come with the GPU lab's page
