"""Export a Hugging Face Qwen3-VL folder to MNN with llmexport, then set runtime options.

Two pitfalls of llmexport 0.0.5 and MNN's converter are handled here:

* llmexport 0.0.5 imports ``utils.model`` as a top-level package, so its own
  command fails with ``No module named 'utils'``; we run it in a child
  process with the llmexport package folder on ``sys.path``.
* MNN's converter imports ``MNN/tools/utils/log.py``, which pip-installs a
  telemetry SDK and uploads logs.  The child blocks that module by setting
  ``sys.modules['MNN.tools.utils.log'] = None`` before anything imports
  ``MNN.tools`` (the converter then treats the logger as absent).

Run as a script only through ``run_llmexport`` (it is this file's ``__main__``).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from sequence import IMAGE_SIZE

RUNTIME_KEYS = ("llm_model", "llm_weight", "visual_model", "tokenizer_file", "embedding_file")


def _child_main(
    hf_dir: str,
    dst: str,
    quant_bit: int,
    visual_quant_bit: int | None,
    quant_block: int,
    lm_quant_bit: int | None = None,
) -> None:
    # Order matters: block the telemetry module before llmexport can pull in MNN.tools.
    sys.modules["MNN.tools.utils.log"] = None  # type: ignore[assignment]
    import importlib.util

    spec = importlib.util.find_spec("llmexport")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("llmexport is not installed in this environment")
    # This script's own folder holds modules named like common ones (tokenizer.py,
    # export.py): keep it off the path, and put llmexport's folder first so its
    # `import utils.model` works.  `llmexport` then names llmexport/llmexport.py.
    here = str(Path(__file__).resolve().parent)
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(here)]
    sys.path.insert(0, list(spec.submodule_search_locations)[0])
    import llmexport as le

    kwargs = dict(export="mnn", dst_path=dst, quant_bit=quant_bit, quant_block=quant_block)
    if visual_quant_bit is not None:
        kwargs["visual_quant_bit"] = visual_quant_bit
    if lm_quant_bit is not None:  # llmexport's default: the lm_head gets quant_bit too
        kwargs["lm_quant_bit"] = lm_quant_bit
    le.export(hf_dir, **kwargs)


def run_llmexport(
    hf_dir: Path,
    dst: Path,
    quant_bit: int = 4,
    visual_quant_bit: int | None = None,
    log_file: Path | None = None,
    quant_block: int = 64,
    lm_quant_bit: int | None = None,
) -> None:
    """Export ``hf_dir`` into ``dst`` (raw llmexport output) in a child process."""
    dst.mkdir(parents=True, exist_ok=True)
    cmd = [
        sys.executable,
        str(Path(__file__).resolve()),
        str(hf_dir),
        str(dst),
        str(quant_bit),
        str(visual_quant_bit if visual_quant_bit is not None else ""),
        str(quant_block),
        str(lm_quant_bit if lm_quant_bit is not None else ""),
    ]
    with open(log_file or dst / "export.log", "w") as fh:
        res = subprocess.run(cmd, stdout=fh, stderr=subprocess.STDOUT, cwd=str(dst))
    if res.returncode != 0:
        tail = Path(log_file or dst / "export.log").read_text(errors="replace")[-3000:]
        raise RuntimeError(f"llmexport failed ({res.returncode}):\n{tail}")


def finish_export(
    raw: Path, out: Path, image_size: int | None = IMAGE_SIZE, thread_num: int = 2, max_new_tokens: int = 32
) -> list[str]:
    """Copy runtime files from ``raw`` to ``out`` and set the runtime options.

    ``image_size`` must go in llm_config.json: MNN merges llm_config.json over
    config.json, and llmexport wrote its own image_size (420) there.  None
    keeps llmexport's value.  Returns the runtime file names.
    """
    cfg = json.loads((raw / "config.json").read_text())
    llm_cfg = json.loads((raw / "llm_config.json").read_text())
    cfg.update({"sampler_type": "greedy", "thread_num": thread_num, "max_new_tokens": max_new_tokens})
    if "mllm" in cfg:
        cfg["mllm"]["thread_num"] = thread_num  # the vision encoder has its own thread count
    if image_size is not None:
        llm_cfg["image_size"] = image_size
    if not (raw / cfg.get("tokenizer_file", "tokenizer.txt")).exists() and (raw / "tokenizer.txt").exists():
        # llmexport always names tokenizer.mtok, but writes tokenizer.txt when
        # the source has no tokenizer.json (vocab.json + merges.txt only).
        cfg["tokenizer_file"] = "tokenizer.txt"
    if llm_cfg.get("is_visual"):
        # MNN defaults to visual.mnn; naming it makes config.json list every graph.
        cfg.setdefault("visual_model", "visual.mnn")
    out.mkdir(parents=True, exist_ok=True)
    files = ["config.json", "llm_config.json"]
    for key in RUNTIME_KEYS:
        name = cfg.get(key)
        if name:
            files.append(name)
            if key in ("llm_model", "visual_model") and not cfg.get(key.replace("model", "weight")):
                files.append(name + ".weight")  # MNN loads <graph>.weight next to the graph
    for name in files[2:]:
        if not (raw / name).exists():
            raise FileNotFoundError(f"llmexport did not write {name}")
        shutil.copyfile(raw / name, out / name)
    (out / "config.json").write_text(json.dumps(cfg, indent=4, ensure_ascii=False) + "\n")
    (out / "llm_config.json").write_text(json.dumps(llm_cfg, indent=4, ensure_ascii=False) + "\n")
    return files


def export_model(
    hf_dir: Path,
    out: Path,
    work: Path,
    quant_bit: int = 4,
    visual_quant_bit: int | None = None,
    image_size: int | None = IMAGE_SIZE,
    quant_block: int = 64,
    lm_quant_bit: int | None = None,
) -> list[str]:
    """HF folder -> finished MNN folder (raw export and its log stay in ``work``)."""
    raw = work / "raw_export"
    shutil.rmtree(raw, ignore_errors=True)
    run_llmexport(
        hf_dir,
        raw,
        quant_bit,
        visual_quant_bit,
        log_file=work / "export.log",
        quant_block=quant_block,
        lm_quant_bit=lm_quant_bit,
    )
    return finish_export(raw, out, image_size=image_size)


if __name__ == "__main__":
    _child_main(
        sys.argv[1],
        sys.argv[2],
        int(sys.argv[3]),
        int(sys.argv[4]) if sys.argv[4] else None,
        int(sys.argv[5]),
        int(sys.argv[6]) if len(sys.argv) > 6 and sys.argv[6] else None,
    )
