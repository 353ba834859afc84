"Several processes send feedback to one model at once: no update may be lost (SQLite transactions, Redis CAS)."
import asyncio, multiprocessing as mp, time
import numpy as np
import pytest
from conftest import need_binary

N_PROC, N_UPDATES = 2, 1000


def feedback_worker(backend: str, where: str, model_id: str, n_updates: int, seed: int, per_action: int, commit_every: int,
                    tasks: int, barrier) -> int:
    "Send `n_updates` online feedbacks to one shared model from a separate process (from `tasks` concurrent tasks); returns how many succeeded."
    from loomnb.bandits.service import ReinforcementLearningFactory

    async def run():
        mem = {"backend": backend, "per_action_min_actions": per_action}
        if backend == "redis": mem["redis_url"] = where
        else: mem["sqlite_path"] = where
        rl = ReinforcementLearningFactory.create(
            {"default_algorithm": "epsilon_greedy", "algorithm_parameters": {"sample_average": True}, "memory": mem,
             "commit_every": commit_every}, seed=seed)
        await rl.connect(background=False)
        rng, done = np.random.default_rng(seed), 0
        barrier.wait()  # spawned processes come up at different times: start the writes together
        async def send(n):
            nonlocal done
            for _ in range(n):
                await rl.process_feedback(model_id, [1.0], int(rng.integers(3)), 1.0, [1.0])
                done += 1
        await asyncio.gather(*(send(len(range(i, n_updates, tasks))) for i in range(tasks)))
        groups = getattr(rl.trainer, "groups_written", 0)
        await rl.close()  # commits what a batched trainer still holds
        if tasks > 1 and commit_every == 1: assert 0 < groups < n_updates, f"{groups} transactions for {n_updates} feedbacks: none grouped"
        return done

    return asyncio.run(run())


def naive_worker(path: str, model_id: str, n_updates: int, barrier) -> None:
    "Control: load -> update -> save without a transaction (what the reference does without a lock provider)."
    from loomnb.bandits.core import encode_weights, decode_weights
    import sqlite3
    c = sqlite3.connect(path, isolation_level=None, timeout=30)
    barrier.wait()
    for _ in range(n_updates):
        w = decode_weights(c.execute("SELECT blob FROM weights WHERE model_id = ?", (model_id,)).fetchone()[0])
        w["counts"] = w["counts"] + 1
        time.sleep(0)  # yield, as an await on a network store would
        c.execute("UPDATE weights SET blob = ? WHERE model_id = ?", (encode_weights(w), model_id))


def _run(q, target, args):
    q.put(target(*args))


def run_processes(target, args_list):
    "Run `target(*args, barrier)` in one spawned process per args tuple; their results in order of completion."
    ctx = mp.get_context("spawn")
    barrier, q = ctx.Barrier(len(args_list)), ctx.Queue()
    procs = [ctx.Process(target=_run, args=(q, target, (*args, barrier))) for args in args_list]
    for p in procs: p.start()
    out = [q.get(timeout=300) for _ in procs]
    for p in procs: p.join(60); assert p.exitcode == 0
    return out


def check_no_lost_update(backend, where, per_action=64, commit_every=1, tasks=1):
    from loomnb.bandits.service import ReinforcementLearningFactory
    t0 = time.perf_counter()
    done = run_processes(feedback_worker, [(backend, where, "shared", N_UPDATES, seed, per_action, commit_every, tasks) for seed in range(N_PROC)])
    dt = time.perf_counter() - t0
    assert done == [N_UPDATES] * N_PROC

    async def read():
        mem = {"backend": backend, ("redis_url" if backend == "redis" else "sqlite_path"): where}
        rl = ReinforcementLearningFactory.create({"default_algorithm": "epsilon_greedy", "memory": mem})
        await rl.connect(background=False)
        w = await rl.memory.load_weights("shared"); n_exp = await rl.memory.count_experiences("shared")
        await rl.close()
        return w, n_exp

    w, n_exp = asyncio.run(read())
    assert int(w["counts"].sum()) == N_PROC * N_UPDATES, f"lost updates: {N_PROC * N_UPDATES - int(w['counts'].sum())}"
    assert n_exp == N_PROC * N_UPDATES
    # with sample averages and reward 1 every value is exactly 1: no torn write mixed two versions
    np.testing.assert_allclose(w["values"][w["counts"] > 0], 1.0)
    print(f"{backend} (per_action_min_actions={per_action}, commit_every={commit_every}, tasks={tasks}): {N_PROC} processes x {N_UPDATES} updates "
          f"in {dt:.2f}s (incl. process start), none lost")


# (per_action_min_actions, commit_every, concurrent tasks per process): whole blob, per action, batched commits,
# group commit (8 tasks per process: feedbacks that arrive while a write is in flight share the next one)
LAYOUTS = [(64, 1, 1), (1, 1, 1), (1, 16, 1), (1, 1, 8)]
LAYOUT_IDS = ["whole-blob", "per-action", "batched", "grouped"]


@pytest.mark.parametrize("per_action,commit_every,tasks", LAYOUTS, ids=LAYOUT_IDS)
def test_sqlite_no_lost_update(tmp_path, per_action, commit_every, tasks):
    check_no_lost_update("sqlite", str(tmp_path / "shared.sqlite3"), per_action, commit_every, tasks)


@pytest.mark.parametrize("per_action,commit_every,tasks", LAYOUTS, ids=LAYOUT_IDS)
def test_redis_no_lost_update(per_action, commit_every, tasks):
    need_binary("redis-server")
    from loomnb.bandits.redis_memory import RedisServer
    with RedisServer() as srv:
        check_no_lost_update("redis", srv.url, per_action, commit_every, tasks)


def test_naive_read_modify_write_loses_updates(tmp_path):
    "The control shows the test can fail: without a transaction concurrent writers overwrite each other."
    from loomnb.bandits.core import encode_weights
    import sqlite3
    path = str(tmp_path / "naive.sqlite3")
    c = sqlite3.connect(path); c.execute("PRAGMA journal_mode=WAL")
    c.execute("CREATE TABLE weights (model_id TEXT PRIMARY KEY, blob BLOB)")
    c.execute("INSERT INTO weights VALUES ('m', ?)", (encode_weights({"counts": np.zeros(1)}),)); c.commit(); c.close()
    run_processes(naive_worker, [(path, "m", 2000) for _ in range(N_PROC)])
    from loomnb.bandits.core import decode_weights
    c = sqlite3.connect(path)
    total = int(decode_weights(c.execute("SELECT blob FROM weights").fetchone()[0])["counts"][0])
    print(f"naive: {total} of {N_PROC * 2000} updates survived ({1 - total / (N_PROC * 2000):.0%} lost)")
    assert total < N_PROC * 2000


WAIT = 3.0  # reward window of the delayed-reward test (long enough for the cross-process joins to land inside it)


def delayed_worker(backend: str, where: str, ids_dir: str, idx: int, n: int, barrier) -> tuple[int, int, int]:
    "Make `n` decisions, join rewards to half of the *other* process's decisions, then flush expired ones."
    from pathlib import Path
    from loomnb.bandits.service import ReinforcementLearningFactory

    async def run():
        mem = {"backend": backend, ("redis_url" if backend == "redis" else "sqlite_path"): where}
        rl = ReinforcementLearningFactory.create(
            {"default_algorithm": "epsilon_greedy", "algorithm_parameters": {"sample_average": True},
             "reward_wait_seconds": WAIT, "default_reward": 0.0, "memory": mem}, seed=idx)
        await rl.connect(background=False)
        ids = [(await rl.get_action("delayed", [1.0], [0, 1, 2]))[1]["decision_id"] for _ in range(n)]
        Path(ids_dir, f"ids.{idx}").write_text("\n".join(ids))
        barrier.wait()
        theirs = Path(ids_dir, f"ids.{1 - idx}").read_text().split("\n")
        joined = sum([await rl.record_reward(d, 1.0) for d in theirs[::2]])
        barrier.wait()
        again = sum([await rl.record_reward(d, 1.0) for d in theirs[::2]])  # joined already (by us): rejected
        await asyncio.sleep(WAIT + 0.3)  # every remaining decision is now past its deadline
        barrier.wait()
        flushed = 0
        while (k := await rl.training.flush_expired()): flushed += k  # both processes flush at once
        await rl.close()
        return joined, again, flushed

    return asyncio.run(run())


def check_delayed_join(backend, where, ids_dir, n=100):
    from loomnb.bandits.service import ReinforcementLearningFactory
    res = run_processes(delayed_worker, [(backend, where, ids_dir, i, n) for i in range(2)])
    half = (n + 1) // 2
    assert sorted(r[0] for r in res) == [half, half], res       # every cross-process join landed
    assert all(r[1] == 0 for r in res), res                       # a reward is joined once only
    assert sum(r[2] for r in res) == 2 * (n - half), res          # every other decision got the default reward, once

    async def read():
        mem = {"backend": backend, ("redis_url" if backend == "redis" else "sqlite_path"): where}
        rl = ReinforcementLearningFactory.create({"default_algorithm": "epsilon_greedy", "memory": mem})
        await rl.connect(background=False)
        out = await rl.memory.load_weights("delayed"), await rl.memory.count_experiences("delayed"), await rl.memory.count_pending()
        await rl.close()
        return out

    w, n_exp, n_pending = asyncio.run(read())
    assert (n_exp, n_pending, int(w["counts"].sum())) == (2 * n, 0, 2 * n)
    np.testing.assert_allclose((w["values"] * w["counts"]).sum(), 2 * half)  # reward 1 exactly for the joined decisions
    print(f"{backend}: 2 processes x {n} decisions, {2 * half} rewards joined across processes, {2 * (n - half)} defaults, none twice")


def test_sqlite_delayed_rewards_across_processes(tmp_path):
    check_delayed_join("sqlite", str(tmp_path / "delayed.sqlite3"), str(tmp_path))


def test_redis_delayed_rewards_across_processes(tmp_path):
    need_binary("redis-server")
    from loomnb.bandits.redis_memory import RedisServer
    with RedisServer() as srv:
        check_delayed_join("redis", srv.url, str(tmp_path))
