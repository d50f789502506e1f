"""executor="ray": items as tasks of a local 2-CPU Ray started by this module (and shut down after it),
the notebook folder shipped with them, call records and recorded cassette entries brought back."""
from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest
import yaml

from a0nb import Agent
from a0nb.engine.batch.ray_backend import QUIET_START
from a0nb.errors import ConfigError
from a0nb.testing import answer, tool_reply
from test_map import CITIES, by_city  # type: ignore[import-not-found]

pytestmark = pytest.mark.slow  # a real local Ray (tens of seconds): left out of `make test-fast`

WHERE = '''import os

def where() -> str:
    """Where this runs."""
    return f"{os.getpid()} {__file__}"
'''
DIE = '''import os

def die() -> str:
    """Exit the process at once."""
    os._exit(3)
'''


def test_without_ray_installed_the_error_says_how_to_install(nb: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # what an environment without Ray looks like to an import
    with pytest.raises(ConfigError, match=r"needs Ray: pip install 'a0nb\[ray\]'"):
        Agent(nb, model=[answer("x")]).map(["a"], "{item}", executor="ray")


ray = pytest.importorskip("ray")


def test_an_unreachable_cluster_is_a_clear_error(nb: Path) -> None:
    assert not ray.is_initialized()
    with pytest.raises(ConfigError, match=r"could not reach the Ray cluster at '127.0.0.1:9' .*Connection refused.*ray status"):
        Agent(nb, model=[answer("x")]).map(["a"], "{item}", executor="ray", address="127.0.0.1:9")
    ray.shutdown()


@pytest.fixture(scope="module")
def local_ray() -> Iterator[Any]:
    try:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, _node_ip_address="127.0.0.1",
                 _system_config=QUIET_START)
    except Exception as exc:  # noqa: BLE001
        ray.shutdown()
        if "timed out during startup" not in str(exc):
            raise
        # Ray's raylet gives its dashboard agent a fixed 15 s to start (ray-project/ray#65983): on a machine
        # loaded far beyond its cores that is not enough, and no setting raises it
        pytest.skip(f"SKIPPED LOUDLY: the local Ray did not start on this overloaded machine: {exc}")
    try:
        yield ray
    finally:
        ray.shutdown()


@pytest.fixture
def trusted_nb(nb: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("A0NB_TRUST", str(nb))  # only this folder: its copy on the workers must be trusted too
    return nb


def test_items_run_as_ray_tasks_in_a_copy_of_the_folder(local_ray: Any, trusted_nb: Path) -> None:
    (trusted_nb / "tools").mkdir()
    (trusted_nb / "tools" / "where.py").write_text(WHERE)
    replies: list[dict[str, Any]] = []
    for city, country in CITIES.items():
        replies += [{"when": f"is {city} in", "content": tool_reply("where")},
                    {"when": f"is {city} in", "content": answer(country)}]
    result = Agent(trusted_nb, model=replies).map(list(CITIES), "Which country is {item} in?", executor="ray")
    assert result.executor == "ray" and result.texts == list(CITIES.values()), result.errors
    places = {str(t.calls[0].tool_result) for t in result}
    assert all(str(os.getpid()) not in p and str(trusted_nb) not in p and "a0nb-ray-" in p for p in places), places
    assert result[0].calls[0].tool_request["tool_name"] == "where"


def test_a_worker_that_dies_loses_only_its_item(local_ray: Any, trusted_nb: Path) -> None:
    (trusted_nb / "tools").mkdir()
    (trusted_nb / "tools" / "die.py").write_text(DIE)
    replies = by_city() + [{"when": "is Atlantis in", "content": tool_reply("die")}]
    result = Agent(trusted_nb, model=replies).map(["Oslo", "Atlantis", "Rome", "Lima"], "Which country is {item} in?",
                                                  executor="ray", concurrency=2)
    assert result.failed == [1], result.errors
    assert result.texts[0::2] == ["Norway", "Italy"] and result.texts[3] == "Peru"
    assert str(result[1].error).startswith("worker died: the Ray worker running this item exited")


def test_a_map_recorded_on_ray_replays_on_threads_and_on_ray(local_ray: Any, nb: Path) -> None:
    (nb / "replies.yaml").write_text(yaml.safe_dump(by_city()))
    recorded = Agent(nb, model="record:ray.cassette.yaml:scripted:replies.yaml").map(
        list(CITIES), "Which country is {item} in?", executor="ray")
    assert recorded.failed == [], recorded.errors
    assert len(yaml.safe_load((nb / "ray.cassette.yaml").read_text())) == 5  # brought back and appended here
    (nb / "replies.yaml").unlink()
    replayer = Agent(nb, model="replay:ray.cassette.yaml")
    order = list(reversed(CITIES))
    for executor in ("ray", "threads"):
        replayed = replayer.map(order, "Which country is {item} in?", executor=executor)
        assert replayed.texts == [CITIES[c] for c in order], replayed.errors
