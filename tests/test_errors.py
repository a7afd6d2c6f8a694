"""The engine's coded errors: only known codes, each with a message in both languages."""
import pytest

from sim.core import upload
from sim.core.errors import CodedError
from sim.gpu import measure as gpu
from sim.gpu import memsim, report
from sim.transformers import shapes
from ui.i18n import catalogue


@pytest.mark.parametrize("cls", [upload.UploadError, shapes.ShapeError, memsim.MemsimError, report.ReportError])
def test_unknown_codes_are_refused(cls):
    assert issubclass(cls, CodedError)
    e = cls(cls.CODES[0], {"n": 1})
    assert e.code == cls.CODES[0] and e.params == {"n": 1}
    with pytest.raises(ValueError, match="no code"):
        cls("no_such_code")


# each family of coded errors, and the catalogue prefix its page words the codes with
MESSAGES = [(upload.ERROR_CODES, "upload"), (shapes.ERROR_CODES, "shp.error"), (memsim.ERROR_CODES, "gpu.error"),
            (gpu.ERROR_CODES, "gpu.measure.error"), (report.ERROR_CODES, "gpu.measure.report_error")]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_code_has_a_message_in_both_languages(lang):
    cat = catalogue(lang)
    assert all(codes for codes, _ in MESSAGES)
    assert [f"{prefix}.{c}" for codes, prefix in MESSAGES for c in codes if f"{prefix}.{c}" not in cat] == []
