"Concurrent writers to one zoo database from several processes: registrations get distinct versions, a compare-and-set promotion has one winner, plain promotions are all recorded."
import os, subprocess, sys, warnings
from pathlib import Path
import pytest

pytest.importorskip("safetensors")
ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""), "OMP_NUM_THREADS": "1"}
PRE = "import sys, warnings; warnings.simplefilter('ignore'); from loomnb.workflow.zoo import ModelZoo, ModelCard, PromotionConflict; z = ModelZoo(sys.argv[1], builtin=False); "

def _run_all(code, *args, n=4):
    procs = [subprocess.Popen([sys.executable, "-c", PRE + code, *map(str, args), str(i)], env=ENV, cwd=ROOT,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for i in range(n)]
    out = [p.communicate(timeout=300) for p in procs]
    for p, (o, e) in zip(procs, out): assert p.returncode == 0, e
    return [o.split()[-1] for o, _ in out]

@pytest.fixture(scope="module")
def zoo(tmp_path_factory):
    from loomnb.train.learner import Trainer
    from loomnb.workflow.zoo import ModelZoo
    d = tmp_path_factory.mktemp("zoo")
    tr = Trainer("ppo", "CartPole-v1", seed=0, config=dict(n_envs=2, n_steps=16, batch_size=32)); tr.train(32)
    ck = tr.save(d/"ck.pt")
    return ModelZoo(d/"registry.sqlite", builtin=False), ck

def test_registrations_get_distinct_versions(zoo):
    z, ck = zoo
    vs = sorted(int(v) for v in _run_all("print(z.register(ModelCard('m', 'ppo', 'CartPole-v1'), sys.argv[2]).version)", z.path, ck))
    assert vs == [1, 2, 3, 4]
    for v in vs: z.load("m", v)   # every version's files are complete and pass their checks
    assert [e["to_version"] for e in z.events("m") if e["action"] == "register"] == [1, 2, 3, 4]

def test_compare_and_set_promotion_has_one_winner(zoo):
    z, _ = zoo
    z.promote("m", 1, reason="start")
    n0 = len(z.events("m"))
    code = ("v = 2 + int(sys.argv[2]) % 3\n"
            "try: z.promote('m', v, reason='proc ' + sys.argv[2], expected=1); print('won')\n"
            "except PromotionConflict: print('conflict')")
    res = sorted(_run_all(code, z.path, n=6))
    assert res == ["conflict"] * 5 + ["won"]
    assert len(z.events("m")) == n0 + 1 and z.current("m") != 1

def test_plain_promotions_are_all_recorded(zoo):
    z, _ = zoo
    n0 = len(z.events("m"))
    _run_all("z.promote('m', 1 + int(sys.argv[2]) % 4, reason='p' + sys.argv[2]); print('ok')", z.path, n=6)
    ev = z.events("m")[n0:]
    assert sorted(e["reason"] for e in ev) == [f"p{i}" for i in range(6)]
    for a, b in zip(ev, ev[1:]): assert b["from_version"] == a["to_version"]   # serialised: each saw the previous one
