"""int8 variants of an embedding model: `embedding.model = "all-MiniLM-L6-v2:int8"`.

ONNX Runtime's dynamic quantization of the exported graph (weights int8 per output channel, activations
quantized on the fly) embeds about twice as many chunks a second as float32 on a two-core AVX-512 CPU, with
vectors at cosine ~0.994 to the float32 ones (docs/benchmarks/indexing.md has the speed and the retrieval cost on
both dev sets). It is an option, never the default: the name with its suffix is the model the graph records, so a
graph built with one is never queried or extended with the other's vectors (build a graph with the one you
want, in its own data directory).
The quantized file is made once from the float32 export, next to it, and found there again; its name carries the
ONNX Runtime version that quantized it, so an upgraded quantizer makes its own file instead of the graph mixing
vectors of two quantizations unnoticed.
"""

from __future__ import annotations

import logging
import os
import tempfile
import threading
from pathlib import Path

from neoweave.errors import ConfigError

log = logging.getLogger(__name__)

INT8_SUFFIX = ":int8"
INT8_FILE = "model.int8.ort-{version}.onnx"
_LOCK = threading.Lock()


def split_precision(model: str) -> tuple[str, str]:
    """("all-MiniLM-L6-v2:int8") -> ("all-MiniLM-L6-v2", "int8"); a name without the suffix is float32."""
    if model.endswith(INT8_SUFFIX) and len(model) > len(INT8_SUFFIX):
        return model[:-len(INT8_SUFFIX)], "int8"
    return model, "float32"


def int8_model(export_dir: Path) -> Path:
    """The int8 graph of an ONNX export, quantized now when missing (a few seconds, once per export; written to a
    temporary file renamed into place, so a concurrent reader never sees half of it)."""
    target = export_dir / INT8_FILE.format(version=_onnxruntime_version())
    if target.exists():
        return target
    with _LOCK:
        if target.exists():
            return target
        try:
            from onnxruntime.quantization import QuantType, quantize_dynamic
        except ImportError as exc:  # onnx is a dependency; a trimmed install may lack it
            raise ConfigError("an int8 embedding model needs the onnx package to quantize the export once",
                              hint="pip install onnx, or drop ':int8' from embedding.model") from exc
        log.warning("quantizing %s to int8 once (a few seconds)", export_dir / "model.onnx")
        try:
            handle, scratch = tempfile.mkstemp(prefix=".int8-", suffix=".onnx", dir=export_dir)
        except OSError as exc:
            raise ConfigError(f"cannot write the int8 model next to the export in {export_dir}: {exc}",
                              hint="make the directory writable once, or drop ':int8' from embedding.model") from exc
        os.close(handle)
        try:
            quantize_dynamic(str(export_dir / "model.onnx"), scratch, per_channel=True,
                             weight_type=QuantType.QInt8)
            os.replace(scratch, target)
        finally:
            Path(scratch).unlink(missing_ok=True)
    return target


def _onnxruntime_version() -> str:
    try:
        import onnxruntime
    except ImportError as exc:
        raise ConfigError("an int8 embedding model runs on ONNX Runtime, which is not installed",
                          hint="pip install onnxruntime, or drop ':int8' from embedding.model") from exc
    return str(onnxruntime.__version__)

