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
