"""Tampered-file suite: every kind of file loomnb reads, edited to carry a payload or damaged, is refused with a loomnb
error naming the file and what is wrong, and the payload never runs (its canary file never appears).

Payloads: a pickle whose `__reduce__` would create a canary file (at the top level, nested, or as pickled bytes where
env state goes), a YAML Python tag, a numpy object array, and truncated, bit-flipped or oversized files."""
import asyncio, json, os, pickle, sqlite3, warnings, zipfile
from pathlib import Path
import numpy as np
import pytest
import torch

os.environ.setdefault("WANDB_MODE", "disabled")

class Canary:
    "A pickle payload: unpickling it runs a command that creates `path`."
    def __init__(self, path): self.path = str(path)
    def __reduce__(self): return (os.system, (f"touch '{self.path}'",))

def payload_bytes(canary) -> bytes: return pickle.dumps([Canary(canary)])

@pytest.fixture
def canary(tmp_path):
    p = tmp_path / "CANARY"
    yield p
    assert not p.exists(), "a payload ran while a file was loaded"

def flip(path: Path, out: Path, at: int) -> Path:
    raw = bytearray(path.read_bytes()); raw[at] ^= 0x20; out.write_bytes(bytes(raw)); return out

def write(out: Path, data: bytes) -> Path: out.write_bytes(data); return out

def truncate(path: Path, out: Path) -> Path:
    raw = path.read_bytes(); out.write_bytes(raw[: len(raw) // 2]); return out

# ---------------------------------------------------------------------------------------------- checkpoints
from loomnb.train.learner import Trainer, CheckpointError, to_safe

_ON = dict(n_envs=2, n_steps=16, batch_size=32, n_epochs=1)
_OFF = dict(n_envs=1, buffer_size=64, learning_starts=16, batch_size=8)

def _corridor():
    "A custom SDK env (vectorised by SyncVecEnv)."
    from gymnasium import spaces
    from loomnb.envs.registry import BaseEnvironment, register_environment, registered_ids
    class TamperCorridor(BaseEnvironment):
        def __init__(self, config=None):
            super().__init__(config); self.length = int(self.config.get("length", 4)); self.pos = 0
            self.observation_space = spaces.Box(0, self.length, (1,), np.float32); self.action_space = spaces.Discrete(2)
        def reset(self, seed=None):
            super().reset(seed=seed); self.pos = int(self.np_random.integers(0, 2)); return np.array([self.pos], np.float32), {}
        def step(self, a):
            self.pos = max(0, self.pos + (1 if a == 1 else -1)); done = self.pos >= self.length
            return np.array([self.pos], np.float32), float(done), done, False, {}
    if "TamperCorridor-v0" not in registered_ids():
        register_environment("TamperCorridor", TamperCorridor, version="0", max_episode_steps=20, backend="custom", length=4)
    return "TamperCorridor-v0"

def _curriculum():
    from loomnb.envs.curriculum import CurriculumVecEnv
    return CurriculumVecEnv("CartPole-v1", "max_episode_steps", [50, 40], num_envs=2, seed=0, success_return=0.0)

# (name, algo, env factory, config, the env-state field a payload replaces)
CASES = {
    "ppo-CartPole-v0-gymnasium": ("ppo", lambda: "CartPole-v0", _ON, "envs"),
    "ppo-native": ("ppo", lambda: "CartPole-v1", _ON, "state"),
    "ppo-SyncVecEnv": ("ppo", _corridor, _ON, "envs"),
    "ppo-VecNormalize": ("ppo", lambda: "CartPole-v0", {**_ON, "normalize_obs": True, "normalize_reward": True}, "envs"),
    "ppo-curriculum": ("ppo", _curriculum, _ON, "state"),
    "a2c-gymnasium": ("a2c", lambda: "CartPole-v0", dict(n_envs=2, n_steps=16), "envs"),
    "dqn-gymnasium": ("dqn", lambda: "CartPole-v0", _OFF, "envs"),
    "sac-native": ("sac", lambda: "Pendulum-v1", _OFF, "state"),
    "td3-gymnasium": ("td3", lambda: "MountainCarContinuous-v0", _OFF, None),
}
_MADE = {}

def checkpoint(name, tmp_path_factory):
    "A real checkpoint of case `name` (trained a few steps), made once per session."
    if name not in _MADE:
        algo, env_fn, cfg, _ = CASES[name]
        env = env_fn()
        kw = {"backend": "gymnasium"} if name == "td3-gymnasium" else {}
        if kw: from loomnb.envs.registry import make; env = make(env, num_envs=1, seed=0, **kw)
        t = Trainer(algo, env=env, seed=0, config=cfg); t.train(32)
        _MADE[name] = (t.save(tmp_path_factory.mktemp(name) / "ck.pt"), env if not isinstance(env, str) else None)
    return _MADE[name]

def _resume(path, env):
    "Trainer.from_checkpoint(path), into a fresh copy of `env` when the case was trained on an env object."
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return Trainer.from_checkpoint(path, **({} if env is None else {"env": _fresh_like(env)}))

def _fresh_like(env):
    from loomnb.envs.curriculum import CurriculumVecEnv
    from loomnb.envs.registry import make
    if isinstance(env, CurriculumVecEnv): return _curriculum()
    return make(env.spec.id, num_envs=env.num_envs, backend="gymnasium", **env.spec.kwargs)

def _edited(path, out, edit):
    "A copy of checkpoint `path` changed by `edit(ck)` (the digest dropped, as an attacker would)."
    ck = torch.load(path, weights_only=True); edit(ck); ck.pop("digest", None); torch.save(ck, out); return out

@pytest.mark.parametrize("name", list(CASES))
def test_checkpoint_env_state_payload_refused(name, tmp_path, tmp_path_factory, canary):
    "Pickled bytes carrying a command where the env state goes: refused (loomnb used to unpickle them), canary absent."
    path, env = checkpoint(name, tmp_path_factory)
    field = CASES[name][3]
    def edit(ck):
        st = ck["env"]["state"]
        key = field if field in st else next(k for k in ("envs", "state") if k in st)
        st[key] = to_safe(np.frombuffer(payload_bytes(canary), np.uint8))
    bad = _edited(path, tmp_path / "tampered.pt", edit)
    with pytest.raises(CheckpointError) as e: _resume(bad, env)
    assert "tampered.pt" in str(e.value)
    assert _resume(path, env).state.global_step > 0   # the untouched file resumes

@pytest.mark.parametrize("name", ["ppo-CartPole-v0-gymnasium", "dqn-gymnasium", "ppo-SyncVecEnv"])
def test_checkpoint_pickled_objects_refused(name, tmp_path, tmp_path_factory, canary):
    "A pickle object at the top level, inside the algorithm state or inside the env's saved attributes: never unpickled."
    path, env = checkpoint(name, tmp_path_factory)
    torch.save(Canary(canary), tmp_path / "top.pt")
    _edited(path, tmp_path / "nested.pt", lambda ck: ck["algo_state"].__setitem__("x", Canary(canary)))
    _edited(path, tmp_path / "attr.pt", lambda ck: ck["env"]["state"]["envs"][0][-1][1].__setitem__("np_random", Canary(canary))
            if isinstance(ck["env"]["state"].get("envs"), list) and ck["env"]["state"]["envs"][0] is not None else None)
    for f in ("top.pt", "nested.pt", "attr.pt"):
        with pytest.raises(CheckpointError) as e: _resume(tmp_path / f, env)
        assert f in str(e.value) and "weights_only" in str(e.value)

@pytest.mark.parametrize("name", ["ppo-CartPole-v0-gymnasium", "sac-native"])
def test_checkpoint_damage_refused(name, tmp_path, tmp_path_factory):
    "Truncated, bit-flipped (anywhere in its data) or edited checkpoints: CheckpointError naming the file."
    path, env = checkpoint(name, tmp_path_factory)
    with pytest.raises(CheckpointError, match="cut.pt"): _resume(truncate(path, tmp_path / "cut.pt"), env)
    with pytest.raises(CheckpointError, match="junk.pt"): (tmp_path / "junk.pt").write_bytes(os.urandom(4096)); _resume(tmp_path / "junk.pt", env)
    zf = zipfile.ZipFile(path); info = max(zf.infolist(), key=lambda i: i.file_size)   # the largest tensor record
    raw = path.read_bytes(); h = info.header_offset   # its data starts after the local header (whose extra field pads)
    start = h + 30 + int.from_bytes(raw[h + 26:h + 28], "little") + int.from_bytes(raw[h + 28:h + 30], "little")
    for k, at in enumerate(np.linspace(start, start + info.file_size - 1, 5).astype(int)):
        with pytest.raises(CheckpointError, match="digest") as e: _resume(flip(path, tmp_path / f"flip{k}.pt", int(at)), env)
        assert f"flip{k}.pt" in str(e.value)
    ck = torch.load(path, weights_only=True); ck["config"]["learning_rate"] = 1e3; torch.save(ck, tmp_path / "edit.pt")
    with pytest.raises(CheckpointError, match="edit.pt.*digest"): _resume(tmp_path / "edit.pt", env)

def test_checkpoint_env_attribute_tampering_refused(tmp_path, tmp_path_factory, canary):
    "Plain-data env state that names a dunder, a property or a foreign bit generator is refused before the env changes."
    path, env = checkpoint("ppo-CartPole-v0-gymnasium", tmp_path_factory)
    def edit_with(k, v):
        def edit(ck): ck["env"]["state"]["envs"][0][-1][1][k] = v
        return edit
    for k, v, msg in [("__class__", 1, "not allowed"), ("np_random", 1, "not a state attribute"),
                      ("_np_random", {"__rng__": {"bit_generator": "os.system"}}, "unknown bit generator"),
                      ("state", "rm -rf /", "expected a numeric array")]:
        bad = _edited(path, tmp_path / "attr.pt", edit_with(k, v))
        with pytest.raises(CheckpointError, match=msg) as e: _resume(bad, env)
        assert "attr.pt" in str(e.value)

# ---------------------------------------------------------------------------------------------- distributed
def test_distributed_checkpoint_and_side_file(tmp_path, canary):
    from loomnb.distributed import DistributedTrainer, load_distributed
    dt = DistributedTrainer("ppo", "CartPole-v0", seed=0, config=_ON); dt.train(32)
    path = dt.save(tmp_path / "d.pt"); side = Path(str(path) + ".ranks")
    assert DistributedTrainer.from_checkpoint(path).state.global_step == 32
    torch.save({"format": "loomnb.distributed/1", "world_size": 1, "shared": {}, "ranks": [Canary(canary)]}, side)
    with pytest.raises(CheckpointError, match="d.pt.ranks' holds objects other than tensors"): DistributedTrainer.from_checkpoint(path)
    ck = torch.load(path, weights_only=True)   # the Trainer checkpoint beside it, with pickled env bytes
    ck["env"]["state"]["envs"] = to_safe(np.frombuffer(payload_bytes(canary), np.uint8)); ck.pop("digest")
    side.unlink(); torch.save(ck, path)
    with pytest.raises(CheckpointError, match="d.pt"): DistributedTrainer.from_checkpoint(path)

def test_distributed_side_file_damage(tmp_path):
    from loomnb.distributed import save_distributed, load_distributed
    p = tmp_path / "s.ranks"; save_distributed(p, {"w": torch.arange(64.0)}, {"env_seed": 1})
    with pytest.raises(CheckpointError, match="cut.ranks"): load_distributed(truncate(p, tmp_path / "cut.ranks"))
    raw = p.read_bytes(); at = raw.find(np.arange(64, dtype=np.float32).tobytes()) + 100
    with pytest.raises(CheckpointError, match="flip.ranks.*damaged"): load_distributed(flip(p, tmp_path / "flip.ranks", at))

# ---------------------------------------------------------------------------------------------- buffers
def _replay(n=40):
    from loomnb.buffers.replay import ReplayBuffer
    b = ReplayBuffer(64, (3,), (), np.float32, np.int64, seed=0)
    for i in range(n): b.push(np.full(3, i, np.float32), i % 2, 1.0, np.full(3, i + 1, np.float32), False, False)
    return b

def _rewrite_npz(src, out, edit):
    "Copy an npz with `edit(meta, arrays)` applied (written with np.savez, as a tampering user would)."
    with np.load(src, allow_pickle=False) as z: meta = json.loads(str(z["__meta__"])); arr = {k: z[k] for k in z.files if k != "__meta__"}
    extra = edit(meta, arr) or {}
    np.savez(out, __meta__=np.array(json.dumps(meta)), **arr, **extra); return out

@pytest.mark.parametrize("kind", ["replay", "prioritized", "tokens"])
def test_npz_buffer_files(kind, tmp_path, canary):
    "Replay, prioritized replay and token-store files: object arrays, pickles, damage and oversized headers are refused."
    if kind == "tokens":
        from loomnb.buffers.tokens import VarLenStore as C
        b = C(seq_fields=("reward",)); [b.append(np.arange(5 + i, dtype=np.int32), reward=float(i)) for i in range(6)]
        big = ("num_tokens", 10**13)
    elif kind == "prioritized":
        from loomnb.buffers.prioritized import PrioritizedReplayBuffer as C
        b = C(64, (3,), (), np.float32, np.int64, seed=0)
        for i in range(20): b.push(np.full(3, i, np.float32), i % 2, 1.0, np.full(3, i + 1, np.float32), False, False)
        big = ("capacity", 10**13)
    else:
        from loomnb.buffers.replay import ReplayBuffer as C
        b, big = _replay(), ("capacity", 10**13)
    p = tmp_path / "b.npz"; b.save(p); C.load(p)
    def objarr(meta, arr):
        k = next(iter(arr)); obj = np.empty(len(arr[k]), object); obj[:] = [Canary(canary)] * len(obj); arr[k] = obj
    files = {"obj.npz": lambda: _rewrite_npz(p, tmp_path / "obj.npz", objarr),
             "pkl.npz": lambda: write(tmp_path / "pkl.npz", payload_bytes(canary)),
             "cut.npz": lambda: truncate(p, tmp_path / "cut.npz"),
             "flip.npz": lambda: flip(p, tmp_path / "flip.npz", len(p.read_bytes()) // 2),
             "big.npz": lambda: _rewrite_npz(p, tmp_path / "big.npz", lambda m, a: m.__setitem__(*big))}
    for name, make_file in files.items():
        f = make_file()
        with pytest.raises(ValueError) as e: C.load(f)
        assert name in str(e.value), (name, str(e.value))

def test_mmap_buffer_file(tmp_path, canary):
    from loomnb.buffers.mmap import MmapReplayBuffer
    p = tmp_path / "m.rb"
    b = MmapReplayBuffer(32, (3,), (), np.float32, np.int64, path=p, hot_capacity=8)
    for i in range(10): b.push(np.full(3, i, np.float32), i % 2, 1.0, np.full(3, i + 1, np.float32), False, False)
    b.flush(); b.close(); MmapReplayBuffer.open(p).close()
    raw = p.read_bytes(); n = int.from_bytes(raw[8:16], "little"); meta = json.loads(raw[16:16 + n])
    def with_meta(name, **kw):
        blob = json.dumps({**meta, **kw}).encode(); out = tmp_path / name
        out.write_bytes(raw[:8] + len(blob).to_bytes(8, "little") + blob + raw[16 + len(blob):]); return out
    files = {"obj.rb": with_meta("obj.rb", obs_dtype="|O"), "big.rb": with_meta("big.rb", capacity=10**13),
             "neg.rb": with_meta("neg.rb", obs_shape=[-3]), "cut.rb": truncate(p, tmp_path / "cut.rb"),
             "pkl.rb": write(tmp_path / "pkl.rb", payload_bytes(canary)),
             "slots.rb": flip(flip(p, tmp_path / "s1", 4096 - 128 + 3), tmp_path / "slots.rb", 4096 - 64 + 3)}
    for name, f in files.items():
        with pytest.raises(ValueError) as e: MmapReplayBuffer.open(f)
        assert name in str(e.value), (name, str(e.value))

def test_offline_dataset_files(tmp_path, canary):
    "A Minari dataset folder: bad metadata JSON, pickled metadata and an object (string) array are refused."
    h5py = pytest.importorskip("h5py")
    from loomnb.buffers.offline import export_minari, load_minari
    from gymnasium import spaces
    d = export_minari(_replay(30), tmp_path / "ds", observation_space=spaces.Box(-np.inf, np.inf, (3,), np.float32), action_space=spaces.Discrete(2))
    load_minari(d)
    data = d / "data" if (d / "data").is_dir() else d
    meta = data / "metadata.json"; good = meta.read_text()
    meta.write_bytes(payload_bytes(canary))
    with pytest.raises(ValueError, match="metadata.json"): load_minari(d)
    meta.write_text(good)
    with h5py.File(data / "main_data.hdf5", "a") as f:
        del f["episode_0/observations"]; f["episode_0/observations"] = np.array([b"__import__('os')"] * 3, dtype=object).astype("S20")
    with pytest.raises(ValueError) as e: load_minari(d)
    assert "main_data.hdf5" in str(e.value) or str(d) in str(e.value), str(e.value)

# ---------------------------------------------------------------------------------------------- registry, configs
def test_run_registry_rows_and_file(tmp_path):
    from loomnb.workflow.runs import RunRegistry, RegistryError
    reg = RunRegistry(tmp_path / "reg.sqlite"); rid = reg.start(params={"a": 1}, kind="train"); reg.finish(rid, metrics={"m": 1.0})
    con = sqlite3.connect(reg.path); con.execute("UPDATE runs SET params = ? WHERE id = ?", ("cos\nsystem\n(S'touch x'\ntR.", rid)); con.commit(); con.close()
    with pytest.raises(RegistryError, match=r"reg.sqlite.*malformed `params`"): reg.get(rid)
    (tmp_path / "junk.sqlite").write_bytes(os.urandom(8192))
    with pytest.raises(RegistryError, match="junk.sqlite"): RunRegistry(tmp_path / "junk.sqlite").find()
    (tmp_path / "rec.json").write_bytes(b"\x80\x04not json")
    with pytest.raises(RegistryError, match="rec.json"): RunRegistry(tmp_path / "r2.sqlite").import_records([tmp_path / "rec.json"])

def test_yaml_and_toml_configs(tmp_path, canary):
    from loomnb.core import ConfigError
    from loomnb.workflow.experiment import TrainingConfig
    from loomnb.bandits.service import RLSettings
    y = tmp_path / "exp.yaml"; y.write_text(f"algorithm: !!python/object/apply:os.system [\"touch '{canary}'\"]\nenv: CartPole-v1\n")
    with pytest.raises(ConfigError, match="exp.yaml.*Python tags are refused"): TrainingConfig.from_yaml(y)
    y.write_bytes(b"algorithm: ppo\n\xff\xfe\x00")
    with pytest.raises(ConfigError, match="exp.yaml"): TrainingConfig.from_yaml(y)
    t = tmp_path / "settings.toml"; t.write_text("[default.ai.rl\nx = = 1\n")
    with pytest.raises(ConfigError, match="settings.toml"): RLSettings.from_toml(t)

# ---------------------------------------------------------------------------------------------- bandit weights and snapshots
def test_bandit_weight_blobs_and_snapshots(tmp_path, canary):
    from loomnb.bandits.core import WeightSchemaError, encode_weights, decode_weights
    from loomnb.bandits.sqlite_memory import SQLiteRLMemory
    w = {"n_actions": 3, "theta": np.arange(12.0).reshape(3, 4)}
    blob = encode_weights(w)
    for bad in (blob[:-5], blob[:10], bytes(bytearray(blob[:40]) + bytes([blob[40] ^ 1]) + blob[41:]), payload_bytes(canary), b""):
        with pytest.raises(WeightSchemaError): decode_weights(bad)
    # a consistent blob (checksum recomputed) that declares an object dtype is refused too
    import struct, zlib
    from loomnb.bandits import core as bc
    hdr = json.dumps({"scalars": {}, "arrays": [["theta", "|O", [2], 0, 16]]}).encode(); body = hdr + payload_bytes(canary)[:16]
    forged = struct.pack("<4sBII", bc._MAGIC, bc._FMT, zlib.crc32(body), len(hdr)) + body
    with pytest.raises(WeightSchemaError): decode_weights(forged)
    async def go():
        m = SQLiteRLMemory(path=tmp_path / "mem.sqlite"); await m.connect()
        await m.save_weights("m1", w); v = await m.snapshot_weights("m1", w, {"note": "x"})
        con = sqlite3.connect(tmp_path / "mem.sqlite")
        con.execute("UPDATE weights SET blob = ?", (payload_bytes(canary),)); con.execute("UPDATE versions SET blob = ?", (blob[:-3],)); con.commit(); con.close()
        m2 = SQLiteRLMemory(path=tmp_path / "mem.sqlite"); await m2.connect()
        with pytest.raises(WeightSchemaError, match=r"mem.sqlite.*'m1'.*foreign magic"): await m2.load_weights("m1")
        with pytest.raises(WeightSchemaError, match=r"mem.sqlite.*'m1' version v1.*checksum"): await m2.load_weight_version("m1", v)
    asyncio.run(go())

def test_no_unsafe_loader_in_the_package():
    "Static check: the package never calls pickle.load(s) on file data, torch.load without weights_only=True, or unsafe YAML."
    import re, loomnb
    root = Path(loomnb.__file__).parent; found = []
    for f in root.rglob("*.py"):
        src = f.read_text()
        for pat in (r"pickle\.loads?\(", r"weights_only\s*=\s*False", r"yaml\.(unsafe_)?load\(", r"allow_pickle\s*=\s*True", r"(?<![.\w])eval\(", r"(?<![.\w])exec\("):
            for m in re.finditer(pat, src):
                line = src[: m.start()].count("\n") + 1
                found.append(f"{f.relative_to(root)}:{line}: {src.splitlines()[line - 1].strip()[:100]}")
    assert found == []

def test_dpo_preference_files(tmp_path, canary):
    "A DPO preference file (JSON lines) carrying a pickle, binary junk, a non-preference row or a bad line is refused, naming the file or line."
    from loomnb.llm.preference import PreferenceData
    good = PreferenceData([{"prompt": "1+1=", "chosen": "2", "rejected": "3"}]).save(tmp_path / "prefs.jsonl")
    assert len(PreferenceData.open(good)) == 1
    for name, data, msg in [("pkl.jsonl", payload_bytes(canary), "not UTF-8 text"), ("junk.jsonl", os.urandom(256) + b"\xff", "not UTF-8 text"),
                            ("half.jsonl", good.read_bytes()[:20], "line 1 is not JSON"),
                            ("obj.jsonl", b'{"prompt": {"__class__": "os.system"}, "chosen": "2", "rejected": "3"}\n', "preference 0 must be")]:
        with pytest.raises(ValueError) as e: PreferenceData.open(write(tmp_path / name, data))
        assert msg in str(e.value) and (name in str(e.value) or "preference 0" in str(e.value)), (name, str(e.value))
