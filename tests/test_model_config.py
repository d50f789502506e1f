"""The `_model_config` plugin's settings (issue 17, item 8): Agent Zero's `config.json` (chat/utility/embedding
slots, chosen as a whole per scope) and `presets.yaml` (project and user), a preset chosen with
`model_preset`, `%config A0.preset` or `%a0 model preset NAME`."""
from __future__ import annotations

import json
from pathlib import Path

import yaml

from a0nb.diagnostics import Diagnostics
from a0nb.settings import resolve

PRESETS = [{"name": "Research", "chat": {"provider": "openrouter", "name": "anthropic/claude-sonnet-4.6",
                                         "ctx_length": 200000},
            "utility": {"provider": "openrouter", "name": "openai/gpt-5.4-mini"}},
           {"name": "Local", "chat": {"provider": "ollama", "name": "qwen3:8b", "api_base": "http://127.0.0.1:11434"}}]


def _write(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data) if path.suffix == ".json" else yaml.safe_dump(data), encoding="utf-8")


def test_upstream_config_json_slots_become_a0nb_settings(tmp_path: Path) -> None:
    nb, home = tmp_path / "nb", tmp_path / "home"
    _write(nb / ".a0proj" / "plugins" / "_model_config" / "config.json", {
        "chat_model": {"provider": "openai", "name": "gpt-4.1", "ctx_length": 64000, "kwargs": {"temperature": 0}},
        "utility_model": {"provider": "openai", "name": "gpt-4.1-mini", "api_base": "http://127.0.0.1:9"},
        "embedding_model": {"provider": "huggingface", "name": "sentence-transformers/all-MiniLM-L6-v2"}})
    s = resolve(nb, [], Diagnostics(), home=home)
    assert (s.model, s.ctx_length, s.model_kwargs) == ("openai/gpt-4.1", 64000, {"temperature": 0})
    assert (s.utility_model, s.utility_api_base) == ("openai/gpt-4.1-mini", "http://127.0.0.1:9")
    assert s.embedding_model == "huggingface/sentence-transformers/all-MiniLM-L6-v2"


def test_the_profile_scope_is_chosen_as_a_whole_over_the_project(tmp_path: Path) -> None:
    nb, home = tmp_path / "nb", tmp_path / "home"
    _write(home / "plugins" / "_model_config" / "config.json", {"chat_model": {"provider": "a", "name": "global"}})
    assert resolve(nb, [], Diagnostics(), home=home).model == "a/global"
    _write(nb / ".a0proj" / "plugins" / "_model_config" / "config.json",
           {"chat_model": {"provider": "a", "name": "project"}, "utility_model": {"provider": "a", "name": "u"}})
    profile = nb / ".a0proj" / "agents" / "coder"
    _write(profile / "plugins" / "_model_config" / "config.json", {"chat_model": {"provider": "a", "name": "coder"}})
    s = resolve(nb, [profile], Diagnostics(), home=home)
    assert (s.model, s.utility_model) == ("a/coder", None)  # not merged with the project's utility model
    assert resolve(nb, [], Diagnostics(), home=home).model == "a/project"


def test_a_preset_from_config_or_a_higher_layer_sets_the_models(tmp_path: Path) -> None:
    nb, home = tmp_path / "nb", tmp_path / "home"
    _write(home / "plugins" / "_model_config" / "presets.yaml", PRESETS)
    _write(nb / ".a0proj" / "plugins" / "_model_config" / "config.json",
           {"chat_model": {"provider": "a", "name": "base"}, "model_preset": "Research"})
    s = resolve(nb, [], Diagnostics(), home=home)
    assert (s.preset, s.model, s.ctx_length) == ("Research", "openrouter/anthropic/claude-sonnet-4.6", 200000)
    assert s.utility_model == "openrouter/openai/gpt-5.4-mini"
    s = resolve(nb, [], Diagnostics(), home=home, magic={"preset": "Local"})
    assert (s.model, s.api_base) == ("ollama/qwen3:8b", "http://127.0.0.1:11434")
    s = resolve(nb, [], Diagnostics(), home=home, magic={"preset": "Local", "model": "explicit/one"})
    assert s.model == "explicit/one"  # an explicit model beats the preset's


def test_a_project_preset_shadows_the_users_and_an_unknown_one_is_a_diagnostic(tmp_path: Path) -> None:
    nb, home, d = tmp_path / "nb", tmp_path / "home", Diagnostics()
    _write(home / "plugins" / "_model_config" / "presets.yaml", PRESETS)
    _write(nb / ".a0proj" / "plugins" / "_model_config" / "presets.yaml",
           [{"name": "Research", "chat": {"provider": "p", "name": "project-research"}}])
    assert resolve(nb, [], d, home=home, magic={"preset": "Research"}).model == "p/project-research"
    s = resolve(nb, [], d, home=home, magic={"preset": "Nope", "model": "x/y"})
    assert s.model == "x/y"
    assert any("model preset 'Nope' is not defined (defined: Local, Research)" in x.message for x in d)
