"""Find a model by manifest id or by folder, and check it before it is loaded."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from app.models.manifest import Manifest, ManifestError, load_manifest
from app.models.marker import all_quick_ok
from app.models.storage import downloaded_models_dir, manifests_dir
from app.models.verify import VerifyReport, verify_folder
from app.paths import MANIFESTS, MODEL_STORE

DEFAULT_MODEL_ID = "keyframe-demo-cpr"


class ModelNotFound(LookupError):
    pass


class ModelNotVerified(RuntimeError):
    def __init__(self, report: VerifyReport) -> None:
        super().__init__(report.describe())
        self.report = report


@dataclass(frozen=True)
class ModelRef:
    """A model folder and, when known, the manifest it must match."""

    id: str
    folder: Path
    manifest: Manifest | None

    @property
    def revision(self) -> str:
        return self.manifest.revision if self.manifest else "unpinned"

    def require_verified(self) -> None:
        """Before a load: the cheap marker check for downloaded models, a full hash otherwise.

        The bundled model is a few hundred KB, so hashing it costs nothing; a
        downloaded 1.5 GB model is re-hashed only when its marker does not match.
        """
        if self.manifest is None:
            return
        if not self.manifest.bundled and all_quick_ok(self.folder, self.manifest):
            return
        report = verify_folder(self.folder, self.manifest)
        if not report.ok:
            raise ModelNotVerified(report)


def load_manifests(folder: Path = MANIFESTS) -> dict[str, Manifest]:
    manifests: dict[str, Manifest] = {}
    for path in sorted(folder.glob("*.json")):
        manifest = load_manifest(path)
        if manifest.id in manifests:
            raise ManifestError(f"{path}: duplicate model id {manifest.id!r}")
        manifests[manifest.id] = manifest
    return manifests


def folder_for(manifest: Manifest, env: Mapping[str, str] | None = None) -> Path:
    if manifest.bundled:
        return MODEL_STORE / manifest.bundled
    return downloaded_models_dir(env) / manifest.id


def resolve_model(ref: str | None, env: Mapping[str, str] | None = None) -> ModelRef:
    """`ref` is a manifest id, or a path to an MNN model folder (or its config.json).

    A folder that no manifest describes is used as the user's own, unpinned model.
    """
    ref = ref or DEFAULT_MODEL_ID
    manifests = load_manifests(manifests_dir(env))
    if ref in manifests:
        manifest = manifests[ref]
        return ModelRef(manifest.id, folder_for(manifest, env), manifest)
    path = Path(ref).expanduser()
    if path.name == "config.json":
        path = path.parent
    if path.is_dir():
        for manifest in manifests.values():
            if folder_for(manifest, env).resolve() == path.resolve():
                return ModelRef(manifest.id, path, manifest)
        return ModelRef(f"local:{path.resolve().name}", path, None)
    known = ", ".join(sorted(manifests)) or "none"
    raise ModelNotFound(f"no model {ref!r}: not a known model id ({known}) and not a folder")
