"""One-hole (FIM) calls of the model runner, as the tests of the decoder make them."""
from engine.worker.runner import ModelRunner
from infill.answer import HoleAnswer
from infill.fim import JobDecoding
from infill.job import Job


def start_fim(runner: ModelRunner, prefix: str, suffix: str, mode: str, max_tokens: int,
              deadline: float | None, overrides: dict) -> JobDecoding:
    return runner.start(Job.fim(prefix, suffix, mode, max_tokens, decoder=overrides), deadline)


def complete_fim(runner: ModelRunner, prefix: str, suffix: str, mode: str, max_tokens: int,
                 deadline: float | None, overrides: dict) -> HoleAnswer:
    [answer] = runner.complete(Job.fim(prefix, suffix, mode, max_tokens, decoder=overrides), deadline)
    return answer
