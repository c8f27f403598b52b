"""Tests of the language server's settings (lsp_server.settings, over completion.settings) and items."""
from __future__ import annotations

from completion.settings import Settings
from lsp_server import server as server_module
from lsp_server import workers as workers_module
from lsp_server.completer import label_for
from lsp_server.settings import ServerSettings


def test_settings_from_options():
    settings, problems = ServerSettings.from_options(
        {"workerAddress": "tcp://127.0.0.1:5555", "deadlineMs": 900, "maxTokens": 16, "mode": "multi_line"})
    assert settings == ServerSettings(worker_address="tcp://127.0.0.1:5555", deadline_ms=900,
                                      max_tokens=16, mode="multi_line") and problems == []
    assert ServerSettings.from_options(None) == (ServerSettings(), [])
    assert ServerSettings.from_options({"workerAddress": None, "mode": None}) == (ServerSettings(), [])


def test_bad_settings_are_reported_and_keep_their_defaults():
    settings, problems = ServerSettings.from_options(
        {"workerAddress": "", "deadlineMs": True, "maxTokens": 10**6, "mode": "fast", "colour": 1})
    assert settings == ServerSettings()
    assert len(problems) == 5 and any("'colour'" in p for p in problems)
    assert "maxTokens" in problems[2] and "1..1024" in problems[2]
    assert ServerSettings.from_options(["x"])[1] == ["the settings must be an object, got list"]


def test_more_settings_from_options():
    settings, problems = ServerSettings.from_options(
        {"maxLines": 3, "prefixTokens": 500, "suffixTokens": 0, "snippetTokens": 100,
         "statsLog": "", "languages": ["python", "typescriptreact"]})
    assert problems == [] and (settings.max_lines, settings.prefix_tokens, settings.suffix_tokens,
                               settings.snippet_tokens) == (3, 500, 0, 100)
    assert settings.stats_log == "" and settings.languages == ["python", "typescriptreact"]
    settings, problems = ServerSettings.from_options({"maxLines": 0, "languages": "python", "statsLog": 1})
    assert settings == ServerSettings() and len(problems) == 3
    settings, problems = ServerSettings.from_options({"workerKeys": "~/.config/infill/keys"})
    assert settings.worker_keys == "~/.config/infill/keys" and problems == []
    assert "infill keys" in ServerSettings.from_options({"workerKeys": " "})[1][0]
    assert ServerSettings().next_edit_drafts == "drafted"
    assert ServerSettings.from_options({"nextEditDrafts": "rules"}) == (ServerSettings(next_edit_drafts="rules"), [])
    settings, problems = ServerSettings.from_options({"nextEditDrafts": True})
    assert settings.next_edit_drafts == "drafted"
    assert "'nextEditDrafts' must be one of drafted, rules, model" in problems[0]


def test_a_configuration_change_keeps_the_settings_it_does_not_name():
    base = ServerSettings(deadline_ms=900, mode="multi_line")
    settings, problems = ServerSettings.from_options({"maxLines": 2, "mode": None}, base)
    assert settings == ServerSettings(deadline_ms=900, mode="multi_line", max_lines=2) and problems == []
    assert ServerSettings.from_options({}, base) == (base, []) and base.max_lines != 2


def test_the_rules_settings_know_only_the_rules_options():
    settings, problems = Settings.from_options({"workerAddress": "tcp://127.0.0.1:5555", "maxLines": 4})
    assert settings == Settings(max_lines=4) and type(settings) is Settings
    assert len(problems) == 1 and "unknown setting 'workerAddress'" in problems[0]
    base = ServerSettings(worker_address="ipc:///tmp/w")
    changed, _ = ServerSettings.from_options({"maxLines": 4}, base)
    assert type(changed) is ServerSettings and changed.worker_address == "ipc:///tmp/w"


def test_label_is_the_first_line_with_text():
    assert label_for(" b + c") == "b + c"
    assert label_for("\n    return x\n    y") == "return x"


def test_the_local_workers_device_and_dtype_are_settings():
    settings, problems = ServerSettings.from_options({"device": "cuda:1", "dtype": "bf16"})
    assert (settings.device, settings.dtype, problems) == ("cuda:1", "bf16", [])
    settings, problems = ServerSettings.from_options({"device": "gpu", "dtype": "int4"})
    assert (settings.device, settings.dtype) == (None, None) and len(problems) == 2
    assert "cuda:N" in problems[0]


def test_the_settings_device_goes_after_the_command_lines(monkeypatch):
    started = {}

    class Group:
        addresses = ["ipc:///nowhere"]

    def start_local_workers(flags, startup_timeout_s):
        started["flags"] = flags
        return Group()

    monkeypatch.setattr(workers_module, "start_local_workers", start_local_workers)
    ls = server_module.InfillLanguageServer(worker_flags=["--device", "cpu"])
    ls.configure({"device": "cuda", "dtype": "bf16"})
    assert ls.session.workers._spawn(ls.session.settings) == ["ipc:///nowhere"]
    assert started["flags"] == ["--device", "cpu", "--device", "cuda", "--dtype", "bf16"]  # argparse: the last wins
