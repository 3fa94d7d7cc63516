"""Find a model by manifest id or by folder, and check it before it is loaded."""

from __future__ import annotations

import importlib.metadata
import re
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from app.models.manifest import Manifest, ManifestError, load_manifest, model_folder
from app.models.verify import FileState, VerifyReport, check_file, verify_folder
from app.storage.locations import downloaded_models_dir, manifests_dir
from app.storage.paths import MANIFESTS, MODEL_STORE

DEFAULT_MODEL_ID = "keyframe-demo-cpr"

# Load-time verification policy. The marker's size+mtime check misses a file
# edited in place with its size and mtime kept, and MNN then crashes on it; so every pinned model
# is re-hashed in full before each load, and nothing is cached. Measured on this machine (2-core
# AVX2 + SHA-NI, page cache warm): SHA-256 at 1.46-1.56 GB/s over a 1 GiB file (app.models.verify.
# sha256_file), i.e. ~1.0 s for the real 1.475 GB model, while MNN loads that model in 7.6 s
# (0.19 GB/s, measured with MNN 3.6.0). Both grow linearly with size, so hashing stays ~13 % of the load at
# any size and no size threshold is needed; the read also warms the page cache MNN reads next.
# Phones with ARMv8 crypto extensions hash at similar speeds.
HASH_BYTES_PER_S = 1.5e9
LOAD_BYTES_PER_S = 0.19e9


class ModelNotFound(LookupError):
    pass


class ModelUnusable(RuntimeError):
    """A known model that must not be loaded; the message is a sentence for the user."""


class ModelNotVerified(ModelUnusable):
    def __init__(self, report: VerifyReport) -> None:
        super().__init__(report.describe())
        self.report = report


class MnnTooOld(ModelUnusable):
    def __init__(self, model_id: str, required: str, installed: str) -> None:
        super().__init__(
            f"{model_id} needs MNN {required} or newer, but MNN {installed} is installed; "
            f"upgrade MNN (pip install 'MNN>={required}')"
        )
        self.required = required
        self.installed = installed


def _version_key(version: str) -> tuple[int, ...]:
    """The leading numeric release of a version string: '3.6.1.post2' and '3.6.1rc1' -> (3, 6, 1)."""
    parts: list[int] = []
    for piece in version.strip().split("."):
        match = re.match(r"\d+", piece)
        if match is None:
            break
        parts.append(int(match.group()))
        if match.end() != len(piece):
            break
    while parts and parts[-1] == 0:
        parts.pop()  # 3.6 == 3.6.0
    return tuple(parts)


def installed_mnn_version() -> str | None:
    """MNN's version without importing it (importing MNN loads the native library and prints).

    An MNN already imported in this process answers for itself; else the installed
    distribution's metadata. Never imports MNN's converter tools package
    (it installs a logging SDK that reports usage to a remote server).
    """
    module = sys.modules.get("MNN")
    if module is not None and callable(getattr(module, "version", None)):
        try:
            return str(module.version())
        except Exception:
            pass
    try:
        return importlib.metadata.version("MNN")
    except importlib.metadata.PackageNotFoundError:
        return None


def check_mnn_version(manifest: Manifest, installed: str | None = None) -> None:
    """Refuses a model whose manifest needs a newer MNN than the one installed.

    An unknown installed version (no metadata, e.g. a hand-built runtime) is not
    refused: the load itself then reports what is wrong.
    """
    installed = installed if installed is not None else installed_mnn_version()
    if installed is None:
        return
    if _version_key(installed) < _version_key(manifest.min_mnn_version):
        raise MnnTooOld(manifest.id, manifest.min_mnn_version, installed)


@dataclass(frozen=True)
class ModelRef:
    """A model folder and, when known, the manifest it must match."""

    id: str
    folder: Path
    manifest: Manifest | None

    @property
    def revision(self) -> str:
        return self.manifest.revision if self.manifest else "unpinned"

    def require_verified(self, mnn_version: str | None = None) -> None:
        """Before every load: the MNN version the manifest needs, then a full hash of every file.

        The full hash (not the marker's size+mtime) is what catches a file edited in
        place; it costs ~13 % of the load itself (see HASH_BYTES_PER_S above). Raises
        ModelUnusable (MnnTooOld or ModelNotVerified) naming the version or the file.
        An unpinned folder has nothing to check here (open_model_folder checks it).
        """
        if self.manifest is None:
            return
        check_mnn_version(self.manifest, mnn_version)
        report = verify_folder(self.folder, self.manifest)
        if not report.ok:
            raise ModelNotVerified(report)


@dataclass(frozen=True)
class ManifestSet:
    """The manifests of a folder that could be read, and a sentence for each file that could not."""

    manifests: dict[str, Manifest]
    problems: tuple[str, ...] = ()


def read_manifests(folder: Path = MANIFESTS) -> ManifestSet:
    """Every manifest of `folder`; a broken file (or a second file with a known id) costs only
    its own model, so one bad manifest does not take the demo model or the app down with it."""
    manifests: dict[str, Manifest] = {}
    problems: list[str] = []
    for path in sorted(folder.glob("*.json")):
        try:
            manifest = load_manifest(path)
        except ManifestError as exc:
            problems.append(str(exc))
            continue
        if manifest.id in manifests:
            problems.append(f"{path}: duplicate model id {manifest.id!r}; the first one is used")
            continue
        manifests[manifest.id] = manifest
    return ManifestSet(manifests, tuple(problems))


def load_manifests(folder: Path = MANIFESTS) -> dict[str, Manifest]:
    """Strict: ManifestError for the first broken file (the `models` command says it and stops)."""
    found = read_manifests(folder)
    if found.problems:
        raise ManifestError(found.problems[0])
    return found.manifests


def folder_for(manifest: Manifest, env: Mapping[str, str] | None = None) -> Path:
    return model_folder(manifest, downloaded_models_dir(env), MODEL_STORE)


def resolve_model(ref: str | None, env: Mapping[str, str] | None = None) -> ModelRef:
    """`ref` is a manifest id, or a path to an MNN model folder (or its config.json).

    A folder that no manifest describes is used as the user's own, unpinned model.
    """
    ref = ref or DEFAULT_MODEL_ID
    manifests = read_manifests(manifests_dir(env)).manifests  # another model's broken manifest is not this one's
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
        copy_of = recognise_copy(path, manifests.values())
        if copy_of is not None:
            return ModelRef(copy_of.id, path, copy_of)
        return ModelRef(f"local:{path.resolve().name}", path, None)
    known = ", ".join(sorted(manifests)) or "none"
    raise ModelNotFound(f"no model {ref!r}: not a known model id ({known}) and not a folder")


def recognise_copy(folder: Path, manifests: Iterable[Manifest]) -> Manifest | None:
    """The pinned model a folder is a copy of (intact or with one damaged file), or None.

    A copy is pinned again, so a damaged one fails verification with the bad file
    named instead of reaching MNN. The test is by content, never by name alone:
    every other MNN export of the same architecture has the same file names. At
    most one manifest file may be missing, of another size or of another hash,
    and every other file must hash-match — one damaged file is what a bad copy,
    a cut transfer or a flipped bit leaves, while another model (even a
    fine-tune: new weights, embeddings and vision) differs in several files.
    Cheap for unrelated folders: names and sizes are compared first, and hashing
    runs smallest file first and stops at the second mismatch.
    """
    for manifest in manifests:
        if _is_copy(folder, manifest):
            return manifest
    return None


def _is_copy(folder: Path, manifest: Manifest) -> bool:
    allowed = 1
    if len(manifest.files) <= allowed * 2:
        return False  # with so few files "all but one" is no evidence of identity
    bad = 0
    candidates: list[tuple[int, int]] = []
    for index, entry in enumerate(manifest.files):
        path = folder / entry.path
        try:
            st = path.lstat()
        except OSError:
            st = None
        if st is None or not path.is_file() or path.is_symlink() or entry.size not in (None, st.st_size):
            bad += 1
            if bad > allowed:
                return False
        else:
            candidates.append((st.st_size, index))
    for _, index in sorted(candidates):
        if check_file(folder, manifest.files[index]).state is not FileState.OK:
            bad += 1
            if bad > allowed:
                return False
    return True
