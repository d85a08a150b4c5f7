"""Configuration from the environment: the defaults the contract promises, a secret key required in
production and generated once in development."""

from __future__ import annotations

import pytest

from inventory_ai.config import Config, ConfigError


def test_production_without_a_secret_key_refuses_to_start(tmp_path, monkeypatch):
    monkeypatch.setenv("INVENTORY_AI_ENV", "production")
    monkeypatch.delenv("INVENTORY_AI_SECRET_KEY", raising=False)
    with pytest.raises(ConfigError, match="INVENTORY_AI_SECRET_KEY"):
        Config.from_env(tmp_path)


def test_development_generates_a_secret_key_once(tmp_path, monkeypatch):
    monkeypatch.delenv("INVENTORY_AI_SECRET_KEY", raising=False)
    monkeypatch.delenv("INVENTORY_AI_ENV", raising=False)
    first = Config.from_env(tmp_path).secret_key
    assert len(first) >= 32
    assert Config.from_env(tmp_path).secret_key == first
    assert (tmp_path / "secret_key").stat().st_mode & 0o077 == 0


def test_environment_defaults_follow_the_contract(tmp_path, monkeypatch):
    for name in (
        "DASHSCOPE_API_KEY",
        "INVENTORY_AI_LLM_PROVIDER",
        "INVENTORY_AI_LLM_MODEL",
        "INVENTORY_AI_MAX_TOOL_ITERATIONS",
        "INVENTORY_AI_DATABASE_URL",
    ):
        monkeypatch.delenv(name, raising=False)
    config = Config.from_env(tmp_path)
    assert (config.llm_provider, config.llm_model, config.max_tool_iterations) == ("offline", "qwen-plus", 5)
    assert config.database_url == f"sqlite:///{tmp_path / 'inventory_ai.db'}"
    monkeypatch.setenv("DASHSCOPE_API_KEY", "sk-test")
    assert Config.from_env(tmp_path).llm_provider == "dashscope"
    monkeypatch.setenv("INVENTORY_AI_MAX_TOOL_ITERATIONS", "many")
    with pytest.raises(ConfigError, match="whole number"):
        Config.from_env(tmp_path)
