"""Data on disk, chunk by chunk, as Dask arrays: directories of .npy chunks, zarr stores, CSV files.

Nothing here reads a whole dataset into one process: writers take an iterable
of chunks, readers return lazy Dask arrays whose chunks are read by the
workers (so the files must be reachable from them, e.g. on a shared file
system). Fit them with :class:`pydpowl.DPOWL` or
:class:`pydpowl.DPWeightedERM`, which take Dask arrays (see docs/dask.md).

Layouts
-------
npy chunks (:func:`write_npy_chunks`, :func:`open_npy_chunks`)
    one subdirectory per array (``X``, ``treatment``, ``benefit``, optionally
    ``propensity``; any names), each holding one ``.npy`` file per chunk,
    named so that they sort in row order (``000000.npy``, ``000001.npy``,
    ...). Chunk ``k`` of every array has the same number of rows.
zarr (:func:`write_zarr`, :func:`open_zarr`)
    a group with one array per name, chunked along the rows (Debian's
    python3-zarr).
CSV (:func:`read_csv_chunks`)
    files matching a glob pattern (``'dir/*.csv'``), one table split in row
    order across them, each with the header line; read in blocks of bytes
    (``dask.bytes.read_bytes``), each parsed once by ``pandas.read_csv`` with
    the numeric columns as float64. The columns are coded as
    :func:`pydpowl.datasets.tabular.owl_data_from_frame` codes one CSV in
    memory (same rules, values and messages), with one pass over the files to
    parse them, check them and count what the notes report; the parsed blocks
    stay on the workers for the fit when memory allows.
"""

from __future__ import annotations

import glob
import io
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np
import pandas as pd

from .._validation import check_positive, resolve_feature_bounds
from ..engine.dask_cluster import compute, persist
from ..engine.dask_problem import count_pass, tree_reduce
from .tabular import parse_bounds, parse_propensity, propensity_statement, treatment_codes

__all__ = ["ChunkedOWLData", "write_npy_chunks", "open_npy_chunks", "write_zarr", "open_zarr", "read_csv_chunks",
           "csv_files"]

PathLike = Union[str, os.PathLike]


@dataclass(frozen=True)
class ChunkedOWLData:
    """DP-OWL data as Dask arrays, with the public settings (the chunked :class:`~pydpowl.datasets.OWLData`).

    Attributes
    ----------
    X : dask.array.Array of shape (n, p)
    treatment, benefit, propensity : dask.array.Array of shape (n,)
        Treatment in {-1, 1}, benefit, and P(A_i | x_i) of the received treatment.
    feature_names : tuple of str
    feature_bounds : tuple of ndarray
    weights_upper_bound : float
    treatment_labels : tuple of str
        Names of the arms coded +1 and -1.
    description : str
    notes : tuple of str
    weight_sensitivity : float, "trivial" or None
        The weight sensitivity C the propensities carry (0 for a randomised
        trial's; what the analyst stated for a column; None: not stated).
    diagnostics : dict of str to int
        Counts computed from the data (rows, subjects per arm, clipped
        benefits): not private, printed only on request (as ``OWLData``'s).
    """

    X: Any
    treatment: Any
    benefit: Any
    propensity: Any
    feature_names: Tuple[str, ...]
    feature_bounds: Tuple[np.ndarray, np.ndarray]
    weights_upper_bound: float
    treatment_labels: Tuple[str, str] = ("1", "-1")
    description: str = ""
    notes: Tuple[str, ...] = field(default_factory=tuple)
    weight_sensitivity: Any = None
    diagnostics: Dict[str, int] = field(default_factory=dict)

    @property
    def n(self) -> int:
        """Number of subjects."""
        return int(self.X.shape[0])


# --------------------------------------------------------------------------- npy chunks


def write_npy_chunks(directory: PathLike, chunks: Iterable[Mapping[str, np.ndarray]]) -> Path:
    """Write chunks (mappings name -> array, rows first) as ``directory/<name>/<k>.npy``.

    Every chunk must hold the same names with the same number of rows. Only
    one chunk is in memory at a time (the iterable may generate them). Arrays
    are written in C order (rows contiguous; a Fortran-ordered array, such as
    ``DataFrame.to_numpy()`` often returns, is copied). Returns the directory.
    """
    directory = Path(directory)
    names: Optional[List[str]] = None
    for k, chunk in enumerate(chunks):
        if names is None:
            names = sorted(chunk)
            if not names:
                raise ValueError("write_npy_chunks: a chunk must hold at least one array.")
            for name in names:
                (directory / name).mkdir(parents=True, exist_ok=True)
        if sorted(chunk) != names:
            raise ValueError(f"write_npy_chunks: chunk {k} holds {sorted(chunk)}, the first chunk {names}.")
        _same_rows(k, chunk)
        for name in names:
            np.save(directory / name / f"{k:06d}.npy", np.ascontiguousarray(chunk[name]))  # C order, as read
    if names is None:
        raise ValueError("write_npy_chunks: no chunks were given.")
    return directory


def open_npy_chunks(directory: PathLike) -> Dict[str, Any]:
    """The arrays of a :func:`write_npy_chunks` directory as Dask arrays (one chunk per file).

    Only the files' headers are read here; workers load the chunks.

    Raises
    ------
    FileNotFoundError
        If the directory holds no subdirectory with ``.npy`` files.
    ValueError
        If the arrays have different numbers of chunks or rows per chunk.
    """
    import dask.array as da
    from dask import delayed

    directory = Path(directory)
    if not directory.is_dir():
        raise FileNotFoundError(f"npy chunk directory not found: {directory}")
    files = {sub.name: sorted(sub.glob("*.npy")) for sub in sorted(directory.iterdir()) if sub.is_dir()}
    files = {name: paths for name, paths in files.items() if paths}
    if not files:
        raise FileNotFoundError(f"{directory} holds no subdirectory with .npy chunks (layout: <name>/<k>.npy).")
    headers = {name: [_npy_header(p) for p in paths] for name, paths in files.items()}
    rows = _check_layout(directory, {name: [h[0][0] if h[0] else 1 for h in hs] for name, hs in headers.items()})
    arrays = {}
    for name, paths in files.items():
        blocks = [da.from_delayed(delayed(_load_npy, pure=True)(str(p), _file_stamp(p)), shape=shape, dtype=dtype)
                  for p, (shape, dtype) in zip(paths, headers[name])]
        arrays[name] = da.concatenate(blocks, axis=0)
    del rows
    return arrays


def _file_stamp(path: Path) -> Tuple[int, int]:
    """Modification time and size: part of a chunk's task key, so that a rewritten file is read again."""
    stat = path.stat()
    return stat.st_mtime_ns, stat.st_size


def _load_npy(path: str, stamp: Tuple[int, int]) -> np.ndarray:
    del stamp  # in the task key only
    return np.load(path)


def _npy_header(path: Path) -> Tuple[Tuple[int, ...], np.dtype]:
    """Shape and dtype from a .npy header (C- or Fortran-ordered: ``np.load`` reads both)."""
    with open(path, "rb") as fh:
        version = np.lib.format.read_magic(fh)
        read = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
        shape, _, dtype = read(fh)
    return tuple(shape), np.dtype(dtype)


def _check_layout(where: Any, rows: Dict[str, List[int]]) -> List[int]:
    first = next(iter(rows))
    for name, counts in rows.items():
        if len(counts) != len(rows[first]):
            raise ValueError(f"{where}: {name} has {len(counts)} chunks, {first} has {len(rows[first])}.")
        if counts != rows[first]:
            k = next(i for i, (a, b) in enumerate(zip(counts, rows[first])) if a != b)
            raise ValueError(f"{where}: chunk {k} of {name} has {counts[k]} rows, of {first} {rows[first][k]}.")
    return rows[first]


def _same_rows(k: int, chunk: Mapping[str, np.ndarray]) -> None:
    counts = {name: int(np.shape(a)[0]) for name, a in chunk.items()}
    if len(set(counts.values())) > 1:
        raise ValueError(f"chunk {k}: the arrays have different numbers of rows {counts}.")


# --------------------------------------------------------------------------- zarr


def write_zarr(path: PathLike, chunks: Iterable[Mapping[str, np.ndarray]], *, chunk_rows: Optional[int] = None
               ) -> Path:
    """Append chunks (mappings name -> array) to a new zarr group at ``path``, one array per name.

    ``chunk_rows`` sets the rows per zarr chunk (default: the rows of the first chunk).
    """
    import zarr

    path = Path(path)
    group = zarr.open_group(str(path), mode="w")
    arrays: Dict[str, Any] = {}
    for k, chunk in enumerate(chunks):
        _same_rows(k, chunk)
        if not arrays:
            for name in sorted(chunk):
                a = np.asarray(chunk[name])
                rows = chunk_rows or max(int(a.shape[0]), 1)
                arrays[name] = group.create_dataset(name, shape=(0,) + a.shape[1:], chunks=(rows,) + a.shape[1:],
                                                    dtype=a.dtype)
        if sorted(chunk) != sorted(arrays):
            raise ValueError(f"write_zarr: chunk {k} holds {sorted(chunk)}, the first chunk {sorted(arrays)}.")
        for name, target in arrays.items():
            target.append(np.asarray(chunk[name]))
    if not arrays:
        raise ValueError("write_zarr: no chunks were given.")
    return path


def open_zarr(path: PathLike) -> Dict[str, Any]:
    """The arrays of a zarr group as Dask arrays (chunked as stored)."""
    import dask.array as da
    import zarr

    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"zarr store not found: {path}")
    group = zarr.open_group(str(path), mode="r")
    names = sorted(group.array_keys())
    if not names:
        raise FileNotFoundError(f"{path} holds no zarr arrays.")
    arrays = {name: da.from_zarr(str(path), component=name) for name in names}
    lengths = {name: a.shape[0] for name, a in arrays.items()}
    if len(set(lengths.values())) > 1:
        raise ValueError(f"{path}: the arrays have different numbers of rows {lengths}.")
    return arrays


# --------------------------------------------------------------------------- CSV files


def csv_files(pattern: PathLike) -> List[str]:
    """The files a glob pattern (or one file name) matches, sorted; raises if there are none."""
    files = sorted(glob.glob(str(pattern)))
    files = [f for f in files if os.path.isfile(f)]
    if not files:
        raise FileNotFoundError(f"no data file matches {str(pattern)!r}")
    return files


def read_csv_chunks(pattern: PathLike, *, treatment: str, benefit: str, features: Sequence[str], bounds: Any,
                    weights_upper_bound: float, propensity: Any = 0.5, treated: Optional[str] = None,
                    benefit_lower_bound: Optional[float] = None, weight_sensitivity: Any = None,
                    blocksize: Union[str, int, None] = "64MB", source: Optional[str] = None) -> ChunkedOWLData:
    """DP-OWL data from CSV files as Dask arrays (:func:`~pydpowl.datasets.tabular.owl_data_from_frame` per chunk).

    One pass over the files parses each block of bytes once, with the numeric
    columns as float64 (``pandas.read_csv``, the parser and the doubles of an
    in-memory read) and the treatment as text, and counts what the checks
    need. The parsed blocks are kept in the workers' memory when they and the
    fit's prepared chunks take at most half of it
    (:func:`~pydpowl.estimators.dask_inputs.should_persist`): the fit then reads
    memory. Otherwise every pass parses the files again.

    Parameters
    ----------
    pattern : str or path
        A glob pattern (``'dir/*.csv'``) or one file; files are taken in sorted order.
    treatment, benefit, features, bounds, weights_upper_bound, propensity, treated, benefit_lower_bound
        As for :func:`~pydpowl.datasets.tabular.owl_data_from_frame`.
    weight_sensitivity : float, "trivial" or None
        The weight sensitivity C stated for a propensity column (as for
        :func:`~pydpowl.datasets.tabular.owl_data_from_frame`).
    blocksize : str, int or None, default="64MB"
        Bytes per chunk (blocks of a file end at line ends); None: one chunk per file.
    source : str, optional
        Shown in messages and the description (default: the pattern).

    Returns
    -------
    ChunkedOWLData

    Raises
    ------
    FileNotFoundError, ValueError
        As :func:`~pydpowl.datasets.tabular.owl_data_from_frame`, with counts over all files.
    """
    import dask.array as da
    from dask import delayed
    from dask.bytes import read_bytes

    from ..estimators.dask_inputs import should_persist

    source = str(pattern) if source is None else source
    files = csv_files(pattern)
    features = [str(f) for f in features]
    if not features:
        raise ValueError("features must name at least one column.")
    if len(set(features)) != len(features):
        raise ValueError("features must not repeat a column.")
    prop = parse_propensity(propensity)
    needed: List[str] = list(dict.fromkeys([treatment, benefit, *features] + ([prop] if isinstance(prop, str)
                                                                              else [])))
    headers = {}
    for path in files:
        line, columns = _csv_header(path)
        missing = [c for c in needed if c not in columns]
        if missing:
            where = source if path == files[0] else f"{source} ({Path(path).name})"
            raise ValueError(f"{where}: missing column(s) {missing}; columns present: {columns[:20]}.")
        headers[path] = line
    if treatment in features or benefit in features:
        raise ValueError("the treatment and benefit columns must not be features.")
    lower, upper = parse_bounds(bounds, features) if isinstance(bounds, str) else resolve_feature_bounds(
        "bounds", bounds, len(features), list(features))
    W = check_positive("weights_upper_bound", weights_upper_bound)
    lower_bound = None if benefit_lower_bound is None else float(benefit_lower_bound)
    spec = _CsvSpec(treatment=treatment, benefit=benefit, features=tuple(features),
                    propensity=prop, benefit_lower_bound=lower_bound)

    _, per_file = read_bytes(files, delimiter=b"\n", blocksize=blocksize, sample=False)
    parsed = [delayed(_parse_csv_block, pure=False)(block, None if k == 0 else headers[path], spec, Path(path).name)
              for path, blocks in zip(files, per_file) for k, block in enumerate(blocks)]
    counts = tree_reduce([delayed(_block_counts, pure=True)(b) for b in parsed], _merge_csv_counts)
    count_pass("validation", len(parsed))
    p_count = len(features)
    # the parsed blocks (X, benefit, propensity, treatment codes) and the fit's prepared chunks (Z, labels, weights)
    if should_persist(_csv_rows_estimate(files) * 8 * ((p_count + 3) + (p_count + 1 + 2))):
        *parsed, counts = persist(*parsed, counts, label="the pass reading the CSV files")
    try:
        (stats,) = compute(counts, label="the pass reading the CSV files")
        (plus, minus), arms, notes, diagnostics = _csv_checks(stats, spec, source, treated, (lower, upper), W)
    except BaseException:
        parsed, counts = [], None  # the persisted blocks leave the workers now, not when the traceback goes
        raise
    note, stated = propensity_statement(prop, weight_sensitivity)
    notes.insert(-1, note)
    outs = [delayed(_csv_arrays, nout=4, pure=False)(b, spec, arms) for b in parsed]
    X = da.concatenate([da.from_delayed(o[0], shape=(k, p_count), dtype=np.float64)
                        for o, k in zip(outs, stats["rows"])])
    vectors = [da.concatenate([da.from_delayed(o[j], shape=(k,), dtype=np.float64)
                               for o, k in zip(outs, stats["rows"])])
               for j in (1, 2, 3)]
    return ChunkedOWLData(
        X=X, treatment=vectors[0], benefit=vectors[1], propensity=vectors[2], feature_names=tuple(features),
        feature_bounds=(lower, upper), weights_upper_bound=W, treatment_labels=(plus, minus),
        description=f"{source}, {len(files)} file(s)", notes=tuple(notes), weight_sensitivity=stated,
        diagnostics=diagnostics,
    )


@dataclass(frozen=True)
class _CsvSpec:
    treatment: str
    benefit: str
    features: Tuple[str, ...]
    propensity: Union[float, str]
    benefit_lower_bound: Optional[float]

    @property
    def numeric(self) -> List[str]:
        """The columns parsed as numbers."""
        return list(dict.fromkeys([*self.features, self.benefit] + (
            [self.propensity] if isinstance(self.propensity, str) else [])))

    @property
    def columns(self) -> List[str]:
        return list(dict.fromkeys([self.treatment, *self.numeric]))


def _csv_checks(stats: Dict[str, Any], spec: _CsvSpec, source: str, treated: Optional[str],
                bounds: Tuple[np.ndarray, np.ndarray], W: float):
    """The checks of :func:`~pydpowl.datasets.tabular.owl_data_from_frame` on the counts of all blocks (the same
    messages), and what the data report: ``((plus, minus), arms, notes, diagnostics)``, where ``arms`` maps each
    treatment value to +1 or -1, the notes end with the public settings and ``diagnostics`` holds the
    NON-PRIVATE counts (shown only on request)."""
    treatment, benefit, features, prop = spec.treatment, spec.benefit, list(spec.features), spec.propensity
    n = int(sum(stats["rows"]))
    na = {c: stats["na"][c] for c in spec.columns if stats["na"][c]}
    if na:
        raise ValueError(f"{source}: missing values in {na} (counts); remove or impute them first.")
    levels = sorted(stats["levels"])
    if stats["more_levels"]:
        raise ValueError(f"the treatment column must take exactly 2 values, got more than {_MAX_LEVELS}.")
    codes, plus, minus = treatment_codes(pd.Series(levels), treated)  # the in-memory rule, on the distinct values
    n_plus = sum(stats["level_counts"][lv] for lv, code in zip(levels, codes) if code > 0)
    bad_cols = [f for f in features if stats["text"][f]]
    if bad_cols:
        raise ValueError(f"{source}: feature column(s) {bad_cols} are not numeric; code categories as 0/1 columns.")
    infinite = {f: stats["inf"][f] for f in features if stats["inf"][f]}
    if infinite:
        raise ValueError(f"{source}: infinite values in feature column(s) {infinite} (counts); remove them first.")
    if stats["text"][benefit]:
        raise ValueError(f"{source}: benefit column {benefit!r} is not numeric ({stats['text'][benefit]} entries).")
    if stats["inf"][benefit]:
        raise ValueError(f"{source}: benefit column {benefit!r} has {stats['inf'][benefit]} infinite entries; "
                         "remove them first.")
    notes = [f"treatment {treatment!r}: +1 = {plus}, -1 = {minus}",
             f"benefit {benefit!r} (larger is better)",
             f"features {features}"]
    diagnostics = {"rows read": n, f"treatment +1 ({plus})": int(n_plus),
                   f"treatment -1 ({minus})": int(n - n_plus)}
    if spec.benefit_lower_bound is not None:
        notes.append(f"benefit shifted by the public lower bound {spec.benefit_lower_bound:g}; values below it are "
                     "clipped to it")
        diagnostics["benefits below the lower bound (clipped)"] = int(stats["benefit_below"])
    if isinstance(prop, str) and stats["propensity_outside"]:
        raise ValueError(f"{source}: propensity column {prop!r} must hold probabilities in (0, 1); "
                         f"{stats['propensity_outside']} of {n} entries do not.")
    if stats["blocks_as_text"]:  # every reason to parse a block as text raised above
        raise RuntimeError(f"{source}: {stats['blocks_as_text']} block(s) held text in numeric columns, yet the "
                           "checks passed; please report this.")
    lower, upper = bounds
    notes.append(f"public settings: bounds {dict(zip(features, zip(lower.tolist(), upper.tolist())))}, W = {W:g}")
    arms = {level: float(code) for level, code in zip(levels, codes)}
    return (plus, minus), arms, notes, diagnostics


def _csv_header(path: str) -> Tuple[bytes, List[str]]:
    """The first line of a CSV file (bytes, with its line end) and the column names it gives."""
    try:
        with open(path, "rb") as fh:
            line = fh.readline()
        return line, list(pd.read_csv(io.BytesIO(line), nrows=0, encoding="utf-8-sig").columns)
    except Exception as exc:
        raise ValueError(f"could not read {Path(path).name} as CSV: {_first_line(exc)}") from None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _csv_rows_estimate(files: Sequence[str], sample: int = 1 << 16) -> int:
    """Rows in the files, estimated from the line length in the first 64 kB of the first file."""
    with open(files[0], "rb") as fh:
        head = fh.read(sample)
    lines = max(head.count(b"\n"), 1)
    return int(sum(os.path.getsize(f) for f in files) * lines / max(len(head), 1)) + 1


#: distinct treatment values kept per chunk (more than 2 is an error anyway)
_MAX_LEVELS = 3


def _parse_csv_block(block: bytes, header: Optional[bytes], spec: _CsvSpec, name: str) -> Dict[str, Any]:
    """One block of a CSV file, parsed once: numeric columns as float64 (the in-memory parser and doubles),
    the treatment as text categories; with the counts of :func:`_merge_csv_counts`.

    A block whose numeric columns hold text is parsed again as text and only counted (the client raises).
    """
    data = block if header is None else header + block
    numeric = spec.numeric
    dtypes: Dict[str, Any] = {c: np.float64 for c in numeric}
    dtypes[spec.treatment] = "category"
    try:
        frame = pd.read_csv(io.BytesIO(data), usecols=spec.columns, dtype=dtypes, encoding="utf-8-sig")
    except ValueError:  # text in a numeric column, or not CSV at all
        try:
            frame = pd.read_csv(io.BytesIO(data), usecols=spec.columns, dtype=object, encoding="utf-8-sig")
        except Exception as exc:
            raise ValueError(f"could not read {name} as CSV: {_first_line(exc)}") from None
        text_counts = _csv_counts(frame, spec)
        text_counts["blocks_as_text"] = 1
        return {"counts": text_counts}
    values = {c: frame[c].to_numpy(dtype=np.float64, copy=True) for c in numeric}  # not views of the frame
    arm = frame[spec.treatment].cat
    codes = arm.codes.to_numpy()
    labels = [str(c).strip() for c in arm.categories]
    per_category = np.bincount(codes[codes >= 0], minlength=len(labels))
    level_counts: Dict[str, int] = {}
    for label, k in zip(labels, per_category):
        if k:
            level_counts[label] = level_counts.get(label, 0) + int(k)
    counts: Dict[str, Any] = {
        "rows": [len(frame)],
        "na": {c: int(np.count_nonzero(np.isnan(v))) for c, v in values.items()},
        "text": {c: 0 for c in numeric},
        "inf": {c: int(np.count_nonzero(np.isinf(v))) for c, v in values.items()},
        "blocks_as_text": 0,
    }
    counts["na"][spec.treatment] = int(np.count_nonzero(codes < 0))
    _level_counts(counts, level_counts)
    _range_counts(counts, values, spec)
    X = np.empty((len(frame), len(spec.features)))
    for j, f in enumerate(spec.features):
        X[:, j] = values[f]
    return {"counts": counts, "X": X, "codes": codes, "labels": labels, "benefit": values[spec.benefit],
            "propensity": values[spec.propensity] if isinstance(spec.propensity, str) else None}


def _block_counts(parsed: Dict[str, Any]) -> Dict[str, Any]:
    return parsed["counts"]


def _level_counts(out: Dict[str, Any], level_counts: Dict[str, int]) -> None:
    """The treatment values of a chunk (text, stripped) and their counts, at most :data:`_MAX_LEVELS` kept."""
    ordered = sorted(level_counts.items(), key=lambda item: -item[1])
    out["more_levels"] = len(ordered) > _MAX_LEVELS
    out["level_counts"] = dict(ordered[:_MAX_LEVELS])
    out["levels"] = set(out["level_counts"])


def _range_counts(out: Dict[str, Any], numeric: Mapping[str, np.ndarray], spec: _CsvSpec) -> None:
    """Benefits below the public lower bound and propensities outside (0, 1)."""
    out["benefit_below"] = 0
    if spec.benefit_lower_bound is not None:
        with np.errstate(invalid="ignore"):
            out["benefit_below"] = int(np.count_nonzero(numeric[spec.benefit] < spec.benefit_lower_bound))
    out["propensity_outside"] = 0
    if isinstance(spec.propensity, str):
        p = numeric[spec.propensity]
        with np.errstate(invalid="ignore"):
            out["propensity_outside"] = int(np.count_nonzero(~((p > 0) & (p < 1))))


def _csv_counts(frame: pd.DataFrame, spec: _CsvSpec) -> Dict[str, Any]:
    """The counts of a chunk read as text (it holds text in a numeric column): rows, missing, non-numeric
    and infinite entries per column, treatment values."""
    cols = list(frame.columns)
    out: Dict[str, Any] = {"rows": [len(frame)], "na": {c: int(frame[c].isna().sum()) for c in cols},
                           "text": {}, "inf": {}}
    numeric = {}
    for c in spec.numeric:
        v = pd.to_numeric(frame[c], errors="coerce")
        out["text"][c] = int((v.isna() & frame[c].notna()).sum())
        out["inf"][c] = int(np.isinf(v.to_numpy(dtype=float)).sum())
        numeric[c] = v.to_numpy(dtype=float)
    counts = frame[spec.treatment].dropna().astype(str).str.strip().value_counts()
    _level_counts(out, {str(lv): int(c) for lv, c in counts.items()})
    _range_counts(out, numeric, spec)
    return out


def _merge_csv_counts(*parts: Dict[str, Any]) -> Dict[str, Any]:
    out: Dict[str, Any] = {"rows": [], "na": {}, "text": {}, "inf": {}, "levels": set(), "more_levels": False,
                           "level_counts": {},
                           "benefit_below": 0, "propensity_outside": 0, "blocks_as_text": 0}
    for part in parts:
        out["rows"] += part["rows"]
        for key in ("na", "text", "inf"):
            for c, v in part[key].items():
                out[key][c] = out[key].get(c, 0) + v
        for lv, c in part["level_counts"].items():
            out["level_counts"][lv] = out["level_counts"].get(lv, 0) + c
        out["more_levels"] = out["more_levels"] or part["more_levels"] or len(out["level_counts"]) > _MAX_LEVELS
        if out["more_levels"]:  # the distinct values kept stay few
            out["level_counts"] = dict(sorted(out["level_counts"].items())[:_MAX_LEVELS])
        out["levels"] = set(out["level_counts"])
        for key in ("benefit_below", "propensity_outside", "blocks_as_text"):
            out[key] += part[key]
    return out


def _csv_arrays(parsed: Dict[str, Any], spec: _CsvSpec, arms: Mapping[str, float]):
    """One parsed block as float arrays, coded as :func:`~pydpowl.datasets.tabular.owl_data_from_frame` codes a
    table: treatment +1 or -1 by its (stripped) text value (``arms``, from the in-memory rule on the distinct
    values), benefits shifted by the public lower bound, P(A_i | x_i) of the received arm."""
    from ..estimators.benefits import shift_benefits
    from ..estimators.propensity_received import arm_propensity

    lookup = np.array([arms[label] for label in parsed["labels"]], dtype=np.float64)
    A = lookup[parsed["codes"]] if len(lookup) else np.empty(0)
    B = parsed["benefit"]
    if spec.benefit_lower_bound is not None and len(B):
        B, _ = shift_benefits(B, spec.benefit_lower_bound)
    p_plus = parsed["propensity"] if isinstance(spec.propensity, str) else spec.propensity
    return parsed["X"], A, B, np.asarray(arm_propensity(p_plus, A), dtype=float).reshape(-1)
