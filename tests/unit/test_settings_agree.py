"""One source of truth: SARGConfig's fields, the adapters' settings and the CLI options agree."""

from __future__ import annotations

import argparse
import dataclasses

import pytest

from sarg_integrations import cli
from sarg_integrations.config import SARGConfig, settings


def _config_options() -> dict[str, argparse.Action]:
    group = argparse.ArgumentParser(add_help=False)
    cli.run._add_config_options(group)
    return {a.dest: a for a in group._actions}


def test_every_field_has_a_setting_with_a_group() -> None:
    described = settings()
    assert list(described) == [f.name for f in dataclasses.fields(SARGConfig)]
    assert {s.group for s in described.values()} == {"core", "tasr", "runtime"}
    assert all(s.help for s in described.values())


def test_adapter_settings_mirror_the_config() -> None:
    pytest.importorskip("pydantic")
    from sarg_integrations._adapters import SARGSettings

    defaults = SARGConfig()
    fields = SARGSettings.model_fields
    for name, setting in settings().items():
        field = fields["triple_schema" if name == "schema" else name]
        expected = None if name == "direction" else getattr(defaults, name)
        assert field.default == expected, name
        assert field.description == setting.help, name


def test_cli_options_mirror_the_config() -> None:
    options = _config_options()
    on_cli = {name: s for name, s in settings().items() if s.option is not None}
    assert set(options) == set(on_cli)
    for name, setting in on_cli.items():
        action = options[name]
        assert action.option_strings == [setting.option]
        assert action.help.startswith(setting.help)
        assert tuple(action.choices or ()) == tuple(setting.choices or ())


def test_cli_options_build_the_config() -> None:
    parser = argparse.ArgumentParser()
    cli.run._add_config_options(parser)
    parser.add_argument("--no-progress", action="store_true")
    argv = ["--top-k", "2", "--threshold", "0.25", "--tasr-depth", "3", "--deadline", "4"]
    config = cli.run._config_from_args(parser.parse_args(argv), 1)
    assert (config.top_k, config.similarity_threshold) == (2, 0.25)
    assert (config.tasr_taxonomy_depth, config.deadline_seconds) == (3, 4.0)
