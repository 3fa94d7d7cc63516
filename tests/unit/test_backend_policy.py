from app.core.backend_policy import judge_backend


def test_cpu_needs_no_check() -> None:
    d = judge_backend("cpu", "", "")
    assert d.used == "cpu" and not d.fell_back


def test_empty_gpu_output_falls_back() -> None:
    d = judge_backend("metal", '{"a":1}', "  ")
    assert d.used == "cpu" and d.fell_back and "empty" in d.reason


def test_mismatch_falls_back_and_says_what_differed() -> None:
    d = judge_backend("opencl", '{"observation":"yes"}', "!!!!!!")
    assert d.used == "cpu" and "!!!!!!" in d.reason


def test_matching_output_keeps_the_backend() -> None:
    d = judge_backend("opencl", "same\n", "same")
    assert d.used == "opencl" and not d.fell_back


def test_a_backend_mnn_does_not_have_falls_back_even_when_the_answers_match() -> None:
    # MNN runs CPU under the other name, so the answers agree: only its own words tell.
    d = judge_backend("opencl", "same", "same", missing=True)
    assert d.used == "cpu" and d.reason == "opencl is not available on this device; using CPU"


def test_a_backend_that_raises_falls_back_naming_the_error() -> None:
    d = judge_backend("vulkan", "same", "", error="RuntimeError: no device")
    assert d.used == "cpu" and "vulkan failed on the reference image (RuntimeError: no device)" in d.reason


def test_mnns_words_for_a_missing_backend_are_read_from_native_output() -> None:
    """What libc's stdout and stderr carry inside the block is captured, and still passed on."""
    import ctypes
    import os

    from app.engine.stdio import capture_native_output
    from app.worker.serve import backend_missing

    libc = ctypes.CDLL(None)
    with capture_native_output() as said:
        libc.printf(b"Can't Find type=3 backend, use 0 instead\n")
        libc.fflush(None)
        os.write(2, b"Load Cache file error.\n")
    assert backend_missing(said.text) and "Load Cache file error." in said.text
    with capture_native_output() as said:
        libc.printf(b"The device supports: i8sdot:0\n")
        libc.fflush(None)
    assert not backend_missing(said.text)
