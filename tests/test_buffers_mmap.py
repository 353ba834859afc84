"Kill a process while it writes to an MmapReplayBuffer, reopen the file, and check no stored transition is corrupt."
import os, signal, subprocess, sys, textwrap, time
import numpy as np
import pytest
from loomnb.buffers.mmap import MmapReplayBuffer

OBS = (84, 84, 4)          # one Atari frame stack: 28 KB per observation, so a batch write takes a while
CAP, BATCH = 600, 32

def content(ids):
    "Deterministic transition content for global transition ids (what the writer pushed)."
    ids = np.asarray(ids, np.int64)
    obs = ((ids[:, None] * 7 + np.arange(np.prod(OBS))[None, :]) % 251).astype(np.uint8).reshape(len(ids), *OBS)
    nxt = ((ids[:, None] * 7 + 3 + np.arange(np.prod(OBS))[None, :]) % 251).astype(np.uint8).reshape(len(ids), *OBS)
    return obs, nxt, ids % 5, ids.astype(np.float32), ids % 13 == 0, ids % 17 == 0

WRITER = textwrap.dedent(f"""
    import sys, numpy as np
    sys.path.insert(0, {os.path.dirname(__file__)!r})
    from test_buffers_mmap import content, OBS, CAP, BATCH
    from loomnb.buffers.mmap import MmapReplayBuffer
    path, create = sys.argv[1], sys.argv[2] == "1"
    if create:
        buf = MmapReplayBuffer(CAP, OBS, (), np.uint8, np.int64, path=path, hot_capacity=64)
        nxt = 0
    else:
        buf = MmapReplayBuffer.open(path, hot_capacity=64)
        nxt = int(buf.rewards[(buf.pos - 1) % CAP]) + 1 if len(buf) else 0   # resume after the newest committed id
    pool_o, pool_no = content(np.arange(251 + BATCH))[:2]   # frame content repeats with period 251 in the id
    first = True
    while True:                                # almost all the time goes into push_batch, so kills land inside it
        ids = np.arange(nxt, nxt + BATCH)
        s = nxt % 251
        buf.push_batch(pool_o[s:s + BATCH], ids % 5, ids.astype(np.float32), pool_no[s:s + BATCH], ids % 13 == 0, ids % 17 == 0)
        nxt += BATCH
        if first: print("pushed", flush=True); first = False
""")

def check(path):
    "Every committed transition matches its id's content and the ids are consecutive; returns (n, newest id)."
    with MmapReplayBuffer.open(path, hot_capacity=64) as buf:
        n = len(buf)
        if n == 0: return 0, -1
        slots = (buf.pos - n + np.arange(n)) % CAP
        ids = buf.rewards[slots].astype(np.int64)
        assert (np.diff(ids) == 1).all(), "committed ids are not consecutive"
        o, no, a, r, te, tr = content(ids)
        assert (buf.obs[slots] == o).all() and (buf.next_obs[slots] == no).all(), "corrupt observation"
        assert (buf.actions[slots] == a).all() and (buf.terminated[slots] == te).all() and (buf.truncated[slots] == tr).all()
        b = buf.sample(min(n, 64), 0)                     # the sampling path (RAM ring + map) agrees as well
        bo, bno, ba, br, bte, btr = content(b.rewards.astype(np.int64))
        assert (b.obs == bo).all() and (b.next_obs == bno).all() and (b.actions == ba).all()
        return n, int(ids[-1])

def test_kill_while_writing_then_reopen(tmp_path):
    path = str(tmp_path / "buf.rb")
    rng = np.random.default_rng(0)
    newest, env, inside = -1, {**os.environ, "NUMBA_NUM_THREADS": "1"}, 0
    for round_ in range(6):
        p = subprocess.Popen([sys.executable, "-c", WRITER, path, "1" if round_ == 0 else "0"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)
        line = p.stdout.readline()
        assert line.strip() == "pushed", p.stderr.read()
        time.sleep(float(rng.uniform(0.1, 0.8)))          # let it write and wrap the ring, then kill it mid-push
        p.send_signal(signal.SIGKILL); p.wait(timeout=30)
        assert p.returncode == -signal.SIGKILL
        n, last = check(path)
        assert n > 0 and last > newest, (round_, n, last, newest)   # progress survived, resumed where it stopped
        inside += n < min(CAP, last + 1)                # killed between a push's two commits
        newest = last
    print(f"kills inside a push: {inside} of 6")
    assert inside >= 1, "no kill landed between a push's two commits: the test did not exercise a torn write"
    assert newest + 1 > CAP, "the ring never wrapped: the overwrite path was not exercised"
