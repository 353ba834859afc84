"""Rebuild the small offline-RL test fixtures in this folder from datasets made by `loomnb.workflow.offline_data.generate_datasets`.

    python tests/data/offline/make_fixtures.py ROOT   # ROOT holds pendulum/expert-v0 and cartpole/expert-v0

Each fixture is the first `EPISODES` episodes of the full dataset, with the same reference scores and env spec.
"""
import sys
from pathlib import Path
from loomnb.buffers.offline import OfflineDatasetBuffer
from loomnb.buffers.datasets import load_dataset, write_dataset

EPISODES = {"pendulum": 10, "cartpole": 10}

def head(src: Path, dst: Path, n_episodes: int):
    ds = load_dataset(src)
    stop = int(ds.episode_bounds()[n_episodes - 1, 1])
    sub = OfflineDatasetBuffer(ds.obs[:stop], ds.actions[:stop], ds.rewards[:stop], ds.next_obs[:stop],
                               ds.terminated[:stop], ds.truncated[:stop])
    info = {**ds.metadata.get("loomnb", {}), "derived_from": f"first {n_episodes} episodes of {ds.dataset_id} (seed {ds.metadata.get('loomnb', {}).get('seed')})"}
    return write_dataset(sub, dst, ds.action_space, ds.observation_space, ds.env_id, ds.ref_min_score, ds.ref_max_score,
                         f"{dst.parent.name}/{dst.name}", info=info)

if __name__ == "__main__":
    root, here = Path(sys.argv[1]), Path(__file__).parent
    for env, n in EPISODES.items():
        if (root / env / "expert-v0").exists() and not (here / env / "expert-v0").exists():
            print(head(root / env / "expert-v0", here / env / "expert-v0", n))
