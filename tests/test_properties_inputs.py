"""Property-based bad-input tests: every config field, every native env's `step`, the kernel wrappers in `loomnb.ops`
and the bandit service refuse bad input with a loomnb ValueError/TypeError that names the parameter, raised from
loomnb's own code (never from inside Numba, NumPy or torch), and never crash the process."""
import asyncio, dataclasses, importlib, math, os, subprocess, sys, tempfile, traceback, typing
from pathlib import Path
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from hypothesis.extra import numpy as hnp

from loomnb.core import Config, ConfigError

FAST = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
PKG = str(Path(importlib.import_module("loomnb").__file__).parent)


def loomnb_error(fn, *names):
    "Call `fn`; it must raise a ValueError/TypeError from loomnb's own code whose message names one of `names`."
    try: fn()
    except (ValueError, TypeError) as e:
        origin = traceback.extract_tb(e.__traceback__)[-1].filename
        assert origin.startswith(PKG), f"{type(e).__name__} raised from {origin}, not loomnb: {e}"
        assert any(n in str(e) for n in names), f"message names none of {names}: {e}"
        return e
    raise AssertionError(f"no error; expected one naming {names}")


# ---- configs ------------------------------------------------------------------------------------------------------
import pkgutil, loomnb
for m in pkgutil.walk_packages(loomnb.__path__, "loomnb."):   # every module, so every Config subclass is found
    if m.name.split(".")[-1] in ("__main__", "widgets", "eval_plots"): continue
    try: importlib.import_module(m.name)
    except ImportError: pass

def _subclasses(c):
    for s in c.__subclasses__(): yield s; yield from _subclasses(s)

CONFIGS = sorted({c for c in _subclasses(Config) if c.__module__.startswith("loomnb.") and not c.__name__.startswith("_")},
                 key=lambda c: c.__name__)
# numeric fields that may legitimately be negative (log-scales, value supports, a target entropy; -1 = "auto")
SIGNED = {"default_reward", "log_std_init", "v_min", "v_max", "log_std_min", "log_std_max", "target_entropy", "gradient_steps"}

def _kind(tp):
    "'int', 'float', 'bool', 'str' or None for the scalar type a field annotation allows."
    args = typing.get_args(tp) or (tp,)
    for k in (bool, float, int, str):
        if k in args: return k.__name__
    return None

FIELDS = [(c, f.name, _kind(typing.get_type_hints(c)[f.name])) for c in CONFIGS for f in dataclasses.fields(c)]

def test_every_config_is_found():
    names = {c.__name__ for c in CONFIGS}
    assert {"PPOConfig", "A2CConfig", "DQNConfig", "SACConfig", "TD3Config", "DDPGConfig", "ImpalaConfig",
            "OffPolicyConfig", "TrainingConfig", "AlgorithmParameters"} <= names, names
    assert all(c() is not None for c in CONFIGS)   # defaults are valid

def _bad_values(kind, name, default, tp):
    "(label, value) pairs every field of `kind` (annotation `tp`) must refuse."
    wrong = {"int": ["8x", 2.5, [1]], "float": ["abc", [0.1], {"a": 1}], "bool": ["yes", 2, None], "str": [3, 1.5, ["a"]]}[kind]
    takes = {typing.get_origin(a) or a for a in (typing.get_args(tp) or (tp,))}
    wrong = [v for v in wrong if type(v) not in takes and not (v is None and type(None) in takes)]
    if list in takes: wrong += [[-1], ["a"]] if name in ("hidden",) else []
    out = [("wrong type", v) for v in wrong]
    if kind == "float": out += [("NaN", float("nan")), ("NaN str", "nan"), ("inf", float("inf")), ("-inf", -float("inf")), ("huge", 1e300)]
    if kind == "int": out += [("huge", 10**18)]
    if kind in ("int", "float") and name not in SIGNED and isinstance(default, (int, float)) and default >= 0:
        out += [("negative", -2 if kind == "int" else -0.5)]
    return out

@pytest.mark.parametrize("cls,name,kind", [x for x in FIELDS if x[2]], ids=lambda x: getattr(x, "__name__", str(x)))
def test_config_field_rejects_bad_values(cls, name, kind):
    default = getattr(cls(), name)
    if name in getattr(cls, "allow_inf", ()): pytest.skip("inf allowed by design")
    for label, v in _bad_values(kind, name, default, typing.get_type_hints(cls)[name]):
        e = loomnb_error(lambda: cls(**{name: v}), f"{cls.__name__}.{name}=")
        assert isinstance(e, ConfigError), (label, e)
        assert "expected" in str(e), e

@FAST
@given(data=st.data())
def test_config_numbers_property(data):
    "Any number in any numeric field: accepted values are finite and bounded, everything else is a ConfigError naming the field."
    cls, name, kind = data.draw(st.sampled_from([x for x in FIELDS if x[2] in ("int", "float")]))
    v = data.draw(st.floats(allow_nan=True, allow_infinity=True) if kind == "float" else
                  st.integers(min_value=-2**70, max_value=2**70))
    try: cfg = cls(**{name: v})
    except ConfigError as e:
        assert f"{cls.__name__}.{name}=" in str(e) or "must" in str(e) or "expected" in str(e), e
        return
    got = getattr(cfg, name)
    assert not isinstance(got, float) or math.isfinite(got) or name in cls.allow_inf
    assert abs(got) <= cls.max_abs


# ---- env actions ----------------------------------------------------------------------------------------------------
from loomnb.envs.registry import make
NATIVE = ["CartPole-v1", "Acrobot-v1", "MountainCar-v0", "Pendulum-v1", "MountainCarContinuous-v0", "Identity-v0", "Target1D-v0", "MinAtarBreakout-v1", "MinAtarSpaceInvaders-v1"]
ENVS = {}

def _env(id, n):
    if (id, n) not in ENVS:
        e = make(id, num_envs=n, seed=0); e.reset(seed=0); ENVS[id, n] = e
    return ENVS[id, n]

def _valid(env, a):
    sp = env.single_action_space
    if hasattr(sp, "n"):
        return a.shape == (env.num_envs,) and a.dtype.kind in "iu" and bool(np.all((a >= 0) & (a < sp.n)))
    return a.shape == (env.num_envs, *sp.shape) and a.dtype.kind == "f" and bool(np.all(np.isfinite(a)))

dtypes = st.sampled_from([np.int64, np.int32, np.uint8, np.uint64, np.int8, np.float32, np.float64, np.float16, np.bool_])

@FAST
@given(id=st.sampled_from(NATIVE), n=st.sampled_from([1, 3]), data=st.data())
def test_env_actions_property(id, n, data):
    "Random arrays of random shape, dtype and values: valid ones step, the rest are refused naming `actions`, env untouched."
    env = _env(id, n); sp = env.single_action_space
    want = (n,) if hasattr(sp, "n") else (n, *sp.shape)
    shape = data.draw(st.one_of(st.just(want), hnp.array_shapes(min_dims=0, max_dims=3, max_side=4)))
    a = data.draw(hnp.arrays(data.draw(dtypes), shape))
    if data.draw(st.booleans()) and a.ndim: a = np.repeat(a, 2, axis=0)[::2]   # non-contiguous view
    s0 = env.get_state()
    if _valid(env, a): env.step(a); return
    loomnb_error(lambda: env.step(a), "`actions`")
    for k in ("state", "t", "ret", "rng"): np.testing.assert_array_equal(env.get_state()[k], s0[k])

@pytest.mark.parametrize("id", NATIVE)
def test_env_actions_named_cases(id):
    env = _env(id, 3); sp = env.single_action_space
    if hasattr(sp, "n"):
        cases = [np.array([0, sp.n, 0]), np.array([0, -1, 0]), np.array([0, 2**62, 0]), np.array([0, 2**64 - 1, 0], np.uint64),
                 np.zeros(3), np.zeros((3, 1), np.int64), np.zeros(2, np.int64), None, "a", np.array([0, "a", 1], object)]
    else:
        cases = [np.full((3, 1), v, np.float32) for v in (np.nan, np.inf, -np.inf)] + \
                [np.zeros((3, 1), np.int64), np.zeros(3, np.float32), None, "abc"]
    for a in cases:
        e = loomnb_error(lambda: env.step(a), "`actions`")
        assert id in str(e) and ("expected" in str(e) or "must be" in str(e)), e

def test_gymnasium_adapter_refuses_nonfinite_actions():
    "NaN/inf never reach a gymnasium simulator (Box2D aborts the process on them)."
    env = make("Pendulum-v1", num_envs=2, seed=0, backend="gymnasium"); env.reset(seed=0)
    for v in (np.nan, np.inf, -np.inf):
        e = loomnb_error(lambda: env.step(np.array([[0.0], [v]], np.float32)), "`actions`[1]=")
        assert "is not finite" in str(e), e
    env.close()

def test_curriculum_env_checks_actions():
    from loomnb.envs.curriculum import CurriculumVecEnv
    import inspect
    env = CurriculumVecEnv(**{k: v for k, v in dict(id="CartPole-v1", num_envs=2, seed=0, param="max_episode_steps",
                                                   levels=[50, 100]).items() if k in inspect.signature(CurriculumVecEnv).parameters})
    env.reset(seed=0)
    loomnb_error(lambda: env.step(np.array([0, 5])), "`actions`")

_CHILD = r'''
import numpy as np
from loomnb.envs.registry import make
ids = %r
for id in ids:
    env = make(id, num_envs=4, seed=0); env.reset(seed=0); sp = env.single_action_space
    bad = ([np.array([0, v, 0, 0]) for v in (-2**63, 2**63 - 1, -1, sp.n, 10**9)] if hasattr(sp, "n") else
           [np.array([[0.0], [v], [0.0], [0.0]], dt) for v in (np.nan, np.inf, -np.inf) for dt in (np.float32, np.float64)])
    for a in bad * 50:
        try: env.step(a); raise SystemExit(f"{id}: accepted {a!r}")
        except ValueError: pass
    env.step(np.zeros(4, np.int64) if hasattr(sp, "n") else np.zeros((4, 1), np.float32))
print("survived")
'''

def test_env_bad_actions_do_not_crash_the_process():
    "Extreme indices and non-finite values, many times, in a child process: it must exit cleanly (no segfault)."
    r = subprocess.run([sys.executable, "-c", _CHILD % (NATIVE,)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and "survived" in r.stdout, (r.returncode, r.stdout[-500:], r.stderr[-2000:])


# ---- kernel inputs --------------------------------------------------------------------------------------------------
from loomnb.ops.returns import gae
from loomnb.ops.td_returns import lambda_returns, discounted_returns, nstep_returns
from loomnb.ops.vtrace import vtrace
from loomnb.ops.llm import group_advantages, token_kl, pack_sequences
from loomnb.ops.stats import explained_variance, RunningMeanStd
from loomnb.ops.segment_tree import SumTree, MinTree

ROLL = ("rewards", "values", "terminated", "truncated", "final_values", "last_values")

def _rollout(T, N, dt):
    r = np.random.default_rng(0)
    return dict(rewards=r.random((T, N)).astype(dt), values=r.random((T, N)).astype(dt), terminated=r.random((T, N)) < .2,
                truncated=r.random((T, N)) < .1, final_values=r.random((T, N)).astype(dt), last_values=r.random(N).astype(dt))

CALLS = {
    "gae": lambda a: gae(*(a[k] for k in ROLL), 0.99, 0.95),
    "lambda_returns": lambda a: lambda_returns(*(a[k] for k in ROLL), 0.99, 0.9),
    "discounted_returns": lambda a: discounted_returns(a["rewards"], a["terminated"], a["truncated"], a["final_values"], a["last_values"], 0.99),
    "nstep_returns": lambda a: nstep_returns(*(a[k] for k in ROLL), 0.99, 3),
    "vtrace": lambda a: vtrace(a["values"], a["values"], *(a[k] for k in ROLL), 0.99, 1.0, 1.0),
}

def _perturb(a, key, how, rng_dt):
    x = a[key]
    if how == "shape": return np.concatenate([x, x[:1]]) if x.ndim else np.zeros(2)
    if how == "noncontig": return np.repeat(x, 2, axis=-1)[..., ::2]
    if how == "dtype": return x.astype(np.float32 if x.dtype == np.float64 else np.float64) if x.dtype.kind == "f" else x.astype(np.int8)
    if how == "int": return x.astype(np.int64)
    if how == "list": return x.tolist()
    if how == "none": return None
    if how == "3d": return x[..., None]

@FAST
@given(fn=st.sampled_from(sorted(CALLS)), key=st.sampled_from(ROLL), how=st.sampled_from(["shape", "noncontig", "dtype", "int", "list", "none", "3d"]),
       T=st.integers(1, 6), N=st.integers(1, 4), dt=st.sampled_from([np.float32, np.float64]))
def test_return_kernels_property(fn, key, how, T, N, dt):
    "One bad argument: a loomnb error naming an argument, or (for a safe conversion) the same result as clean input."
    a = _rollout(T, N, dt); ok = CALLS[fn](a)
    b = {**a, key: _perturb(a, key, how, dt)}
    try: got = CALLS[fn](b)
    except (ValueError, TypeError) as e:
        origin = traceback.extract_tb(e.__traceback__)[-1].filename
        assert origin.startswith(PKG), f"raised from {origin}: {e}"
        assert "`" in str(e), e
        return
    unused = fn == "discounted_returns" and key == "values"
    if not unused:   # accepted: only a conversion that changes nothing may be accepted
        np.testing.assert_allclose(np.asarray(got), np.asarray(ok), rtol=1e-5, atol=1e-6)

@FAST
@given(gamma=st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.none(), st.text(max_size=2)),
       lam=st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-5, 5)))
def test_return_kernel_scalars_property(gamma, lam):
    a = _rollout(4, 2, np.float32)
    ok = lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v <= 1
    if ok(gamma) and ok(lam): gae(*(a[k] for k in ROLL), gamma, lam); return
    loomnb_error(lambda: gae(*(a[k] for k in ROLL), gamma, lam), "`gamma`", "`lam`")

@FAST
@given(x=hnp.arrays(st.sampled_from([np.float32, np.float64, np.int64]), hnp.array_shapes(min_dims=1, max_dims=3, max_side=6)),
       g=st.integers(-2, 8))
def test_group_advantages_property(x, g):
    ok = x.dtype.kind == "f" and g >= 1 and x.ndim <= 2 and (x.size % g == 0 if x.ndim == 1 else x.shape[-1] == g)
    try: out = group_advantages(x, g)
    except (ValueError, TypeError) as e:
        assert traceback.extract_tb(e.__traceback__)[-1].filename.startswith(PKG) and "`" in str(e), e
        return
    assert out.shape == x.shape

@FAST
@given(B=st.integers(1, 3), T=st.integers(1, 5), what=st.sampled_from(["ok", "shape", "dtype", "mask", "noncontig", "none"]))
def test_token_kl_property(B, T, what):
    r = np.random.default_rng(0); lp, rp, m = -r.random((B, T)).astype(np.float32), -r.random((B, T)).astype(np.float32), r.random((B, T)) < .7
    if what == "ok": token_kl(lp, rp, m); return
    args = {"shape": (lp, rp[:, :T - 1] if T > 1 else rp[:, :0], m), "dtype": (lp, rp.astype(np.float64), m), "mask": (lp, rp, m.astype(np.float32)),
            "noncontig": (np.repeat(lp, 2, 1)[:, ::2], rp, m), "none": (None, rp, m)}[what]
    try: token_kl(*args)
    except (ValueError, TypeError) as e:
        assert traceback.extract_tb(e.__traceback__)[-1].filename.startswith(PKG) and "`" in str(e), e

@FAST
@given(seqs=st.lists(st.lists(st.integers(-3, 100), max_size=12), max_size=6), L=st.integers(-2, 10))
def test_pack_sequences_property(seqs, L):
    ok = L >= 1 and all(1 <= len(s) <= L for s in seqs)
    if ok:
        pk = pack_sequences([np.array(s, np.int64) for s in seqs], L)
        assert pk.attention_mask.sum() == sum(map(len, seqs))
    else: loomnb_error(lambda: pack_sequences([np.array(s, np.int64) for s in seqs], L), "`max_length`", "`sequences")

def test_other_kernels_named_errors():
    loomnb_error(lambda: pack_sequences(None, 4), "`sequences`")
    loomnb_error(lambda: pack_sequences([np.arange(3)], 10**13), "`max_length`")
    loomnb_error(lambda: explained_variance(np.zeros(3), np.zeros(4)), "`y_pred`")
    loomnb_error(lambda: explained_variance(np.array(["a"]), np.array(["b"])), "`y_pred`")
    rms = RunningMeanStd((3,))
    for x in (np.zeros((4, 2)), np.full((4, 3), np.nan), np.array([["a"] * 3]), None):
        loomnb_error(lambda: rms.update(x), "`batch`")
    for x in (np.zeros((4, 2)), None, "abc"):
        loomnb_error(lambda: rms.normalize(x), "`x`")
    for f in (lambda_returns, nstep_returns):
        a = _rollout(3, 2, np.float32)
        loomnb_error(lambda: CALLS[f.__name__]({**a, "values": None}), "`values`")

@FAST
@given(idx=st.one_of(hnp.arrays(st.sampled_from([np.int64, np.int32]), st.integers(0, 4), elements=st.integers(-2**31, 2**31 - 1)),
                     hnp.arrays(np.uint64, st.integers(0, 4)), hnp.arrays(np.float64, st.integers(0, 4), elements=st.floats(-20, 20))),
       vals=hnp.arrays(np.float64, st.integers(0, 4), elements=st.floats(allow_nan=True, allow_infinity=True)))
def test_segment_trees_property(idx, vals):
    "Out-of-range or float indices, NaN/negative/inf priorities, length mismatches: refused, the tree unchanged."
    for T, nonneg in ((SumTree, True), (MinTree, False)):
        t = T(16); t.update(np.arange(4), np.ones(4)); before = t.tree.copy()
        good = (idx.dtype.kind in "iu" and len(idx) == len(vals) and bool(np.all((idx >= 0) & (idx < 16)))
                and not np.isnan(vals).any() and (not nonneg or bool(np.all((vals >= 0) & np.isfinite(vals)))))
        if good: t.update(idx, vals); continue
        loomnb_error(lambda: t.update(idx, vals), "`indices`", "`values`")
        np.testing.assert_array_equal(t.tree, before)

def test_sum_tree_sampling_inputs():
    t = SumTree(8); t.update([0, 1], [1.0, 2.0])
    for p in (np.nan, -1.0, 5.0, "a"): loomnb_error(lambda: t.find_prefixsum(p), "`prefix`", "prefix")
    for bs in (0, 2.0, 10**13): loomnb_error(lambda: t.sample(bs, np.random.default_rng(0)), "`batch_size`")
    loomnb_error(lambda: t.sample(2, 0), "`rng`")
    for c in (0, -1, 2.5, 2**41, None, True): loomnb_error(lambda: SumTree(c), "`capacity`")


# ---- bandits ------------------------------------------------------------------------------------------------------
from loomnb.bandits.algorithms import ALGORITHMS, make_algorithm

contexts = st.one_of(st.lists(st.floats(allow_nan=True, allow_infinity=True, width=64), min_size=0, max_size=5),
                     st.just(None), st.text(max_size=3), st.lists(st.lists(st.floats(-1, 1), min_size=1, max_size=2), min_size=1, max_size=2))
actions = st.one_of(st.lists(st.integers(-3, 6), min_size=0, max_size=4), st.just([1.5]), st.just(None), st.just([10**12]), st.just("ab"))

def _ctx_ok(x, dim=3):
    return isinstance(x, list) and len(x) == dim and all(isinstance(v, float) and math.isfinite(v) for v in x)

@FAST
@given(name=st.sampled_from(sorted(ALGORITHMS)), x=contexts, acts=actions,
       a=st.one_of(st.integers(-2, 5), st.floats(allow_nan=True), st.just(10**12), st.none()),
       r=st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=2), st.none()))
def test_bandit_algorithms_property(name, x, acts, a, r):
    "predict/update with random contexts, catalogues, actions and rewards: valid ones work, the rest raise a named loomnb error."
    algo = make_algorithm(name, seed=0)
    w, _ = algo.update_sync({}, [0.1, 0.2, 0.3], 0, 1.0)   # a model of dim 3
    acts_ok = isinstance(acts, list) and acts and len(set(acts)) == len(acts) and all(type(v) is int and 0 <= v < 1000 for v in acts)
    if _ctx_ok(x) and acts_ok: algo.predict_sync(w, x, acts)
    else: loomnb_error(lambda: algo.predict_sync(w, x, acts), "`state_vector`", "`available_actions`", "`action_index`")
    upd_ok = _ctx_ok(x) and type(a) is int and 0 <= a < 1000 and isinstance(r, float) and math.isfinite(r)
    if upd_ok: algo.update_sync(w, x, a, r)
    else: loomnb_error(lambda: algo.update_sync(w, x, a, r), "`state_vector`", "`action_index`", "`reward`")

def test_bandit_delayed_reward_inputs():
    "A bad delayed reward is refused before its decision is taken off the queue: the right one can still join."
    from loomnb.bandits.service import ReinforcementLearningFactory
    from prometheus_client import CollectorRegistry
    async def run():
        rl = ReinforcementLearningFactory.create(dict(default_algorithm="linucb", reward_wait_seconds=30.0),
                                                 sqlite_path=Path(tempfile.mkdtemp()) / "rl.sqlite3", registry=CollectorRegistry(), seed=0)
        await rl.connect(background=False)
        try:
            a, meta = await rl.get_action("m", [0.1, 0.2], [0, 1])
            for r in (float("nan"), float("inf"), "x", None):
                try: await rl.record_reward(meta["decision_id"], r); raise AssertionError(f"accepted reward {r!r}")
                except ValueError as e: assert "`reward`" in str(e), e
            for did in (None, 3, ""):
                try: await rl.record_reward(did, 1.0); raise AssertionError(f"accepted decision_id {did!r}")
                except ValueError as e: assert "`decision_id`" in str(e), e
            assert await rl.record_reward(meta["decision_id"], 1.0)
        finally: await rl.close()
    asyncio.run(run())

def test_bandit_service_inputs():
    "The service's `get_action`/`process_feedback` raise the same named errors (and keep serving afterwards)."
    from loomnb.bandits.service import ReinforcementLearningFactory
    from prometheus_client import CollectorRegistry
    async def run():
        d = Path(tempfile.mkdtemp())
        rl = ReinforcementLearningFactory.create(dict(default_algorithm="linucb"), sqlite_path=d / "rl.sqlite3",
                                                 registry=CollectorRegistry(), seed=0)
        await rl.connect(background=False)
        try:
            a, meta = await rl.get_action("m", [0.1, 0.2], [0, 1, 2])
            await rl.process_feedback("m", [0.1, 0.2], a, 1.0)
            bad_get = [([0.1, float("nan")], [0, 1]), ([0.1, 0.2, 0.3], [0, 1]), ([0.1, 0.2], [0, -1]), ([0.1, 0.2], []),
                       ("xy", [0, 1]), ([0.1, 0.2], [1.5]), ([0.1, 0.2], [10**12])]
            for x, acts in bad_get:
                try: await rl.get_action("m", x, acts); raise AssertionError(f"accepted {x!r} {acts!r}")
                except (ValueError, TypeError) as e:
                    assert any(n in str(e) for n in ("`state_vector`", "`available_actions`", "`action_index`")), e
            bad_fb = [([0.1, 0.2], 0, float("nan")), ([0.1, 0.2], 0, float("inf")), ([0.1, 0.2], -1, 1.0), ([0.1, 0.2], "a", 1.0),
                      ([0.1], 0, 1.0), ([0.1, float("inf")], 0, 1.0), ([0.1, 0.2], 0, "x"), ([0.1, 0.2], 10**12, 1.0), ([0.1, 0.2], 1.5, 1.0), ([0.1, 0.2], None, 1.0), ([0.1, 0.2], 0, None)]
            for x, a, r in bad_fb:
                try: await rl.process_feedback("m", x, a, r); raise AssertionError(f"accepted {x!r} {a!r} {r!r}")
                except (ValueError, TypeError) as e:
                    assert any(n in str(e) for n in ("`state_vector`", "`action_index`", "`reward`")), e
            for mid in (None, 3, ""):
                for call in (lambda: rl.get_action(mid, [0.1, 0.2], [0, 1]), lambda: rl.process_feedback(mid, [0.1, 0.2], 0, 1.0),
                             lambda: rl.trigger_offline_training(mid, 4)):
                    try: await call(); raise AssertionError(f"accepted model_id={mid!r}")
                    except ValueError as e: assert "`model_id`" in str(e), e
            a, meta = await rl.get_action("m", [0.1, 0.2], [0, 1, 2])   # still serving
            assert a in (0, 1, 2)
        finally:
            await rl.close() if hasattr(rl, "close") else None
    asyncio.run(run())
