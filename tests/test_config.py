import pytest

from neoweave.config import load_settings
from neoweave.errors import ConfigError


def test_defaults_are_the_embedded_store(workdir):
    settings = load_settings(environ={})
    assert settings.store.backend == "falkordb"
    assert settings.falkordb.data_dir == (workdir / ".neoweave").resolve()  # absolute from the start
    assert settings.falkordb.ef_runtime == 100
    assert settings.falkordb.ef_construction == 200
    built = load_settings(environ={"NEOWEAVE_EF_CONSTRUCTION": "100"})
    assert built.falkordb.ef_construction == 100
    assert settings.falkordb.hnsw_m == 16 and load_settings(environ={"NEOWEAVE_HNSW_M": "32"}).falkordb.hnsw_m == 32


def test_file_then_environment_then_options(workdir):
    (workdir / "neoweave.toml").write_text('[store]\nbackend = "neo4j"\n[neo4j]\nuri = "bolt://db:7687"\n')
    settings = load_settings(environ={"NEOWEAVE_NEO4J_URI": "bolt://env:7687"})
    assert settings.store.backend == "neo4j" and settings.neo4j.uri == "bolt://env:7687"
    settings = load_settings(environ={}, overrides={"store": {"backend": "falkordb"}})
    assert settings.store.backend == "falkordb"


def test_bad_values_name_the_file_and_parameter(workdir):
    (workdir / "neoweave.toml").write_text('[falkordb]\nef_runtime = "lots"\n')
    with pytest.raises(ConfigError, match=r"neoweave\.toml: invalid value for 'falkordb.ef_runtime'"):
        load_settings(environ={})
    (workdir / "neoweave.toml").write_text('[store]\nbackend = "mysql"\n')
    with pytest.raises(ConfigError, match=r"store\.backend"):
        load_settings(environ={})
    (workdir / "neoweave.toml").write_text('[stor]\nbackend = "neo4j"\n')
    with pytest.raises(ConfigError, match="stor"):
        load_settings(environ={})
    (workdir / "neoweave.toml").write_text("[store\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_settings(environ={})


def test_bad_environment_value_names_the_variable(workdir):
    with pytest.raises(ConfigError, match="NEOWEAVE_STORE"):
        load_settings(environ={"NEOWEAVE_STORE": "sqlite"})


def test_missing_config_file_is_a_clear_error(workdir):
    with pytest.raises(ConfigError, match=r"config file not found: nope\.toml"):
        load_settings("nope.toml", environ={})


def test_password_is_never_shown(workdir):
    settings = load_settings(environ={"NEOWEAVE_NEO4J_PASSWORD": "hunter2"})
    assert settings.neo4j.password.get_secret_value() == "hunter2"
    assert "hunter2" not in repr(settings) and "hunter2" not in str(settings.redacted())
