"""One source of truth: SARGConfig's fields, the adapters' settings and the CLI options agree."""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

import pytest

from sarg_integrations import cli
from sarg_integrations.config import SARGConfig, settings
from sarg_integrations.errors import ConfigError


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



@pytest.mark.parametrize(
    ("option", "field", "value"),
    [
        ("--evidence-budget", "evidence_budget", 0.4),
        ("--causal-evidence-budget", "causal_evidence_budget", 0.6),
        ("--evidence-fill", "evidence_fill", 2),
    ],
)
def test_paper_refuses_each_evidence_option_by_its_name(option, field, value) -> None:
    parser = argparse.ArgumentParser()
    cli.run._add_config_options(parser)
    parser.add_argument("--no-progress", action="store_true")
    parser.add_argument("--paper", action="store_true")
    args = parser.parse_args(["--paper", option, str(value)])
    with pytest.raises(ConfigError, match="--paper") as caught:
        cli.run._config_from_args(args, 1)
    assert (caught.value.field, caught.value.value) == (field, value)

# ------------------------------------------------- issue 16, item 10: upper bounds


BOUNDED = {name: s for name, s in settings().items() if s.maximum is not None}


def test_fields_that_multiply_work_have_an_upper_bound() -> None:
    assert {"beam_width", "top_k", "max_depth", "max_entry_nodes", "max_keyphrases",
            "keyphrase_ngram_max"} <= set(BOUNDED)
    for name, setting in BOUNDED.items():
        SARGConfig(**{name: setting.maximum})  # the bound itself is valid
        with pytest.raises(ConfigError, match=rf"{name}=.* above the limit {setting.maximum}"):
            SARGConfig(**{name: setting.maximum + 1})


def test_a_huge_beam_width_is_refused_everywhere(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # beam_width=10**6 used to run for minutes at 3.5 GB on a 311-edge graph.
    with pytest.raises(ConfigError, match="beam_width=1000000 is above the limit 100"):
        SARGConfig(beam_width=10**6)
    doc = tmp_path / "d.txt"
    doc.write_text("Rain causes floods.", encoding="utf-8")
    code = cli.main(["run", "-q", "why?", "-d", str(doc), "--beam-width", "1000000"])
    assert code == 2
    assert "beam_width=1000000 is above the limit 100" in capsys.readouterr().err
    options = _config_options()
    assert "at most 100" in options["beam_width"].help
    pytest.importorskip("pydantic")
    from sarg_integrations._adapters import SARGSettings

    class Adapter(SARGSettings):
        pass

    with pytest.raises(ConfigError, match="beam_width=1000000 is above the limit"):
        Adapter(beam_width=10**6).sarg_pipeline
