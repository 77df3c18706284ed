"""The peer adapters (ldpkit.audit.peers) and the stored peer audits.

The peers (pure-ldp, multi-freq-ldpy) are the ``bench`` extra, not installed in CI: the adapter
tests skip without them; the stored-audit test runs everywhere.  No peer audit runs here (they run
in ``benchmarks/audit.py``).
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from ldpkit.audit.peers import REFERENCE_COLUMNS, stored_peer_audits

#: reports per input in the chi-square checks, and the p-value under which a channel is rejected
N_CHECK = 2_000
P_REJECT = 1e-3

#: pure-ldp's Hadamard response (eps <= 1) calls random.randint with a float bound, deprecated in
#: Python 3.10 and an error from 3.12: the warning is the peer's, not ours
pytestmark = pytest.mark.filterwarnings("ignore:non-integer arguments to randrange:DeprecationWarning")


def test_stored_peer_audits_load_without_the_peers() -> None:
    table, provenance = stored_peer_audits()
    assert list(table.columns[: len(REFERENCE_COLUMNS)]) == list(REFERENCE_COLUMNS)
    assert len(table) > 0
    assert {"date", "machine", "command", "versions"} <= set(provenance)
    assert set(table["events"]) <= {"white", "black"}
    assert ((table["confidence"] > 0) & (table["confidence"] < 1)).all()
    assert (table["violated"] == (table["bound"] > table["eps"])).all()
    assert not any("/work" in str(v) or "/tmp" in str(v) for v in provenance.values())


@pytest.fixture(scope="module")
def oracles() -> dict:
    pytest.importorskip("pure_ldp")
    pytest.importorskip("multi_freq_ldpy")
    from ldpkit.audit.peers import peer_samplers

    return peer_samplers(4, 1.0)


def _chi_square_p(h: np.ndarray, row: np.ndarray) -> float:
    """Chi-square goodness of fit of one histogram to a channel row, cells of expected count < 5 pooled."""
    n = int(h.sum())
    e = row * n
    big = e >= 5
    obs = np.append(h[big], h[~big].sum())
    exp = np.append(e[big], e[~big].sum())
    keep = exp > 0
    assert obs[~keep].sum() == 0, "outputs the claimed channel gives probability 0"
    obs, exp = obs[keep], exp[keep]
    return float(stats.chi2.sf(((obs - exp) ** 2 / exp).sum(), obs.size - 1))


def test_every_adapter_returns_valid_output_indices(oracles: dict) -> None:
    assert {"pure-ldp/GRR", "pure-ldp/OUE", "pure-ldp/OLH", "multi-freq-ldpy/SS"} <= set(oracles)
    for key, o in oracles.items():
        y = o.sampler(o.d - 1, 50, np.random.default_rng(0))
        assert y.shape == (50,) and y.dtype == np.int64 and y.min() >= 0, key
        if o.sampler.n_outputs is not None:
            assert y.max() < o.sampler.n_outputs, key
        assert o.library in ("pure-ldp", "multi-freq-ldpy") and o.version and o.call and o.eps > 0


def test_the_adapters_are_reproducible_and_leave_the_global_generators_alone(oracles: dict) -> None:
    import random

    state = (np.random.get_state()[1][:5].tolist(), random.getstate())
    o = oracles["pure-ldp/OUE"]
    a = o.sampler(0, 100, np.random.default_rng(7))
    b = o.sampler(0, 100, np.random.default_rng(7))
    assert np.array_equal(a, b)
    assert (np.random.get_state()[1][:5].tolist(), random.getstate()) == state


def test_the_claimed_channels_match_the_peers_outputs(oracles: dict) -> None:
    """Each claimed channel fits the peer's output frequencies (chi-square, p >= P_REJECT for every input).

    With about 40 (oracle, input) tests at P_REJECT, a correct channel fails by chance with
    probability under 5%; the seed is fixed, so the test is deterministic.
    """
    from ldpkit.audit import sample_histograms

    checked = 0
    for key, o in oracles.items():
        if o.channel is None:
            continue
        assert np.allclose(o.channel.sum(axis=1), 1.0), key
        H = sample_histograms(o.sampler, range(o.d), N_CHECK, rng=1)
        assert H.shape[1] <= o.channel.shape[1], key
        for x in range(o.d):
            row = np.pad(H[x], (0, o.channel.shape[1] - H.shape[1]))
            assert _chi_square_p(row, o.channel[x]) >= P_REJECT, (key, x)
        checked += 1
    assert checked >= 10


def test_subset_selection_reveals_the_order_of_its_report(oracles: dict) -> None:
    """multi-freq-ldpy's SS returns the kept item first: the ordered report has zero-probability events."""
    o = oracles["multi-freq-ldpy/SS"]
    s = o.channel
    # at d = 4, eps = 1 one item is reported and the order is moot; at eps = 0.5 two are
    assert s is not None and math.isclose(float(s.sum(axis=1)[0]), 1.0)
    pytest.importorskip("multi_freq_ldpy")
    from ldpkit.audit.peers import peer_samplers

    half = peer_samplers(4, 0.5, libraries=["multi-freq-ldpy"])["multi-freq-ldpy/SS"]
    assert half.channel is not None and ((half.channel == 0) & (half.channel.max(axis=0) > 0)).any()


def test_a_missing_peer_raises_a_one_line_import_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from ldpkit.audit import peers

    monkeypatch.setitem(peers.PEER_LIBRARIES, "pure-ldp", "pure_ldp_is_not_installed")
    with pytest.raises(ImportError, match=r'pip install -e "\.\[bench\]"') as err:
        peers.peer_samplers(4, 1.0, libraries=["pure-ldp"])
    assert "\n" not in str(err.value)


# ------------------------------------------------------------------ the audit chapter's citations
AUDIT_PAGE = Path(__file__).resolve().parents[1] / "book" / "audit.md"

#: (module, file inside the installed package, first and last cited line, text the lines must hold),
#: as the audit chapter cites them for the installed releases
CITED_LINES = [
    ("pure_ldp", "frequency_oracles/rappor/rappor_client.py", 48, 51, ("data[i] = 1",), "else"),
    ("multi_freq_ldpy", "pure_frequency_oracles/SS.py", 38, 41, ("sub_set[0] = int(input_data)",), None),
    ("pure_ldp", "frequency_oracles/unary_encoding/ue_client.py", 55, 55, ("oh_vec[index] = 0",), None),
]


@pytest.mark.parametrize(("module", "path", "first", "last", "held", "absent"), CITED_LINES)
def test_the_chapter_cites_the_lines_that_cause_each_finding(module: str, path: str, first: int, last: int,
                                                               held: tuple, absent: str | None) -> None:
    mod = pytest.importorskip(module)
    lines = (Path(mod.__file__).parent / path).read_text().splitlines()[first - 1:last]
    cited = "\n".join(lines)
    assert all(h in cited for h in held)
    if absent is not None:                      # RAPPOR: no branch ever writes a zero
        assert absent not in cited and "data[i] = 0" not in cited
    page = " ".join(AUDIT_PAGE.read_text().split())
    assert f"`{module}/{path}`" in page
    assert f"{first} to {last}" in page or f"(line {first})" in page


def _reproducers() -> list[str]:
    """The ``python`` code blocks of the audit chapter that start with ``# reproducer:``."""
    blocks = re.findall(r"^```python\n(.*?)^```", AUDIT_PAGE.read_text(), flags=re.S | re.M)
    return [b for b in blocks if b.startswith("# reproducer:")]


def test_the_chapter_has_a_reproducer_per_broken_peer() -> None:
    assert len(_reproducers()) == 2


@pytest.mark.parametrize("index", range(2))
def test_the_chapters_reproducers_show_the_leak(index: int, capsys: pytest.CaptureFixture[str]) -> None:
    code = _reproducers()[index]
    pytest.importorskip("pure_ldp" if "pure_ldp" in code else "multi_freq_ldpy")
    exec(compile(code, f"audit.md reproducer {index}", "exec"), {})   # each ends with its own assert
