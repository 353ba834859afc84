"Property tests (hypothesis): single pushes (fast path == validated path), priorities, and V-trace inputs."
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st, HealthCheck
from loomnb.buffers.replay import ReplayBuffer
from loomnb.buffers.prioritized import PrioritizedReplayBuffer
from loomnb.ops.vtrace import vtrace, vtrace_ref, vtrace_kernel

SET = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
f32 = st.floats(-1e6, 1e6, width=32)

@st.composite
def transitions(draw, d, a, n):
    "n transitions of obs dim d and action dim a (0: scalar int action), as exact-dtype arrays."
    out = []
    for _ in range(n):
        o, no = (np.array(draw(st.lists(f32, min_size=d, max_size=d)), np.float32) for _ in range(2))
        act = np.array(draw(st.lists(f32, min_size=a, max_size=a)), np.float32) if a else draw(st.integers(0, 5))
        out.append((o, act, draw(f32), no, draw(st.booleans()), draw(st.booleans())))
    return out

@SET
@given(st.data(), st.integers(1, 5), st.integers(0, 3), st.integers(1, 9), st.integers(1, 12))
def test_single_push_fast_equals_validated(data, d, a, cap, n):
    "The compiled single push stores exactly what the validated push of the same values as lists stores (ring wrap included)."
    adt = np.float32 if a else np.int64
    fast, slow = (ReplayBuffer(cap, (d,), (a,) if a else (), action_dtype=adt) for _ in range(2))
    for o, act, r, no, te, tr in data.draw(transitions(d, a, n)):
        fast.push(o, act, r, no, te, tr)
        slow.push(o.tolist(), act.tolist() if a else act, r, no.tolist(), int(te), int(tr))
    assert fast._push1[0] is not None
    assert (fast.pos, fast.size) == (slow.pos, slow.size)
    np.testing.assert_array_equal(fast._rec, slow._rec)

@SET
@given(st.integers(1, 4), st.sampled_from([np.nan, np.inf, -np.inf]), st.sampled_from(["fast", "list"]))
def test_bad_reward_names_reward_and_writes_nothing(d, bad, kind):
    b = ReplayBuffer(4, (d,), (1,))
    o = np.zeros(d, np.float32) if kind == "fast" else [0.0] * d
    a = np.zeros(1, np.float32)
    snap = b._rec.copy()
    with pytest.raises(ValueError, match="`reward`"): b.push(o, a, bad, o, False, False)
    assert len(b) == 0 and (b._rec == snap).all()

@SET
@given(st.lists(st.one_of(st.none(), st.floats(0, 1e6)), min_size=1, max_size=20), st.sampled_from([0.0, 0.5, 0.6, 1.0]))
def test_prioritized_push_priority(prios, alpha):
    "Each pushed slot's leaf is priority**alpha (None: the running max priority), and the tree total is their sum."
    b = PrioritizedReplayBuffer(8, (2,), (), alpha=alpha)
    o = np.zeros(2, np.float32)
    mp, leaves = 1.0, {}
    for i, p in enumerate(prios):
        b.push(o, 0.5, 1.0, o, False, False, priority=p)
        leaves[i % 8] = (mp if p is None else p) ** alpha
        if p is not None: mp = max(mp, p)
    assert b.max_priority == mp
    np.testing.assert_allclose([b.sum_tree[k] for k in sorted(leaves)], [leaves[k] for k in sorted(leaves)], rtol=1e-12)
    np.testing.assert_allclose(b.sum_tree.total(), sum(leaves.values()), rtol=1e-9)

@SET
@given(st.one_of(st.floats(max_value=-1e-300), st.just(np.nan), st.just(np.inf), st.just(-np.inf), st.text(max_size=2)))
def test_bad_priority_named(bad):
    "Negative, NaN, infinite or non-number priorities raise a ValueError naming `priority`/`priorities`; nothing changes."
    b = PrioritizedReplayBuffer(4, (2,), ())
    o = np.zeros(2, np.float32)
    b.push(o, 0.0, 1.0, o, False, False)
    snap = b.sum_tree.tree.copy()
    with pytest.raises(ValueError, match="`priority`"): b.push(o, 0.0, 1.0, o, False, False, priority=bad)
    if not isinstance(bad, str):
        with pytest.raises(ValueError, match="`priorities`"): b.update_priorities(np.array([0]), priorities=np.array([bad]))
    assert len(b) == 1 and (b.sum_tree.tree == snap).all()

@st.composite
def trajectories(draw, dtype):
    T = draw(st.integers(1, 48))
    g = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    p = draw(st.sampled_from([0.0, 0.1, 0.5]))
    te = g.random(T) < p; tr = (g.random(T) < p) & ~te
    r, v, fv, bl, tl = (g.normal(size=T).astype(dtype) for _ in range(5))
    return bl, tl, r, v, te, tr, np.where(tr, fv, np.nan).astype(dtype), float(g.normal())

@SET
@given(st.data(), st.sampled_from([np.float32, np.float64]), st.floats(0, 1), st.floats(0.1, 3), st.floats(0.1, 3))
def test_vtrace_1d_matches_reference_and_kernel(data, dtype, gamma, rho_bar, c_bar):
    "A [T] trajectory: the one-env loop equals the reference and the [T, N] kernel on a [T, 1] view."
    bl, tl, r, v, te, tr, fv, lv = data.draw(trajectories(dtype))
    vs, pg = vtrace(bl, tl, r, v, te, tr, fv, lv, gamma, rho_bar, c_bar)
    eps = 1e-4 if dtype == np.float32 else 1e-10
    rvs, rpg = vtrace_ref(bl, tl, r, v, te, tr, fv, lv, gamma, rho_bar, c_bar)
    np.testing.assert_allclose(vs, rvs, rtol=eps, atol=eps); np.testing.assert_allclose(pg, rpg, rtol=eps, atol=eps)
    o1, o2 = np.empty((len(r), 1), dtype), np.empty((len(r), 1), dtype)
    vtrace_kernel(*(x[:, None] for x in (bl, tl, r, v, te, tr, fv)), np.full(1, lv, dtype), gamma, rho_bar, c_bar, o1, o2)
    np.testing.assert_allclose(vs, o1[:, 0], rtol=eps, atol=eps); np.testing.assert_allclose(pg, o2[:, 0], rtol=eps, atol=eps)

NAMES = ["behaviour_logp", "target_logp", "rewards", "values", "terminated", "truncated", "final_values", "last_values"]

@SET
@given(st.data(), st.sampled_from(NAMES[:7]), st.sampled_from(["short", "dtype", "list", "2d"]))
def test_vtrace_bad_array_named(data, name, how):
    "A wrong shape, dtype, ndim or a non-array for one input raises a ValueError naming that input (never a crash)."
    args = dict(zip(NAMES, data.draw(trajectories(np.float32))))
    x = args[name]
    if len(x) < 2 and how == "short": how = "dtype"
    args[name] = {"short": lambda: x[:-1], "dtype": lambda: x.astype(np.float64 if x.dtype != bool else np.int8),
                  "list": lambda: x.tolist(), "2d": lambda: np.stack([x, x], 1)}[how]()
    # `rewards` sets the shape the others are held to: a mis-shaped `rewards` is reported through the first mismatch
    pat = "`(rewards|values)`" if name == "rewards" and how in ("short", "2d") else f"`{name}`"
    with pytest.raises(ValueError, match=pat):
        vtrace(**args, gamma=0.9, rho_bar=1.0, c_bar=1.0)

@SET
@given(st.sampled_from(["gamma", "rho_bar", "c_bar"]), st.one_of(st.just(np.nan), st.just(-1.0), st.just(1.5), st.just(0.0), st.just("x")))
def test_vtrace_bad_scalar_named(name, bad):
    g = np.random.default_rng(0); T = 5
    a = dict(zip(NAMES, [g.normal(size=T).astype(np.float32) for _ in range(4)] + [np.zeros(T, bool)] * 2
                 + [np.zeros(T, np.float32), 0.0]), gamma=0.9, rho_bar=1.0, c_bar=1.0)
    valid = {"gamma": lambda v: isinstance(v, float) and 0 <= v <= 1, "rho_bar": lambda v: isinstance(v, float) and v > 0}
    ok = valid.get(name, valid["rho_bar"])(bad)
    a[name] = bad
    if ok: vtrace(**a); return
    with pytest.raises(ValueError, match=f"`{name}`"): vtrace(**a)
