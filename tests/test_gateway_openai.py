"""The official `openai` client against a live gateway process on the bundled model (a local
worker the gateway starts): a completion with `suffix`, a stream that adds up to it, `n`, a stop
sequence, and the errors as the SDK raises them."""
from __future__ import annotations

import openai
import pytest

from completion.positions import split_at
from gateway_procs import Gateway
from infill.paths import REPO_ROOT

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

SHAPES = (REPO_ROOT / "examples" / "shapes.py").read_text()
PREFIX, SUFFIX = split_at(SHAPES, 12, 28)  # after `return 2 * math.pi *`, as `infill run` checks
BODY_PREFIX, BODY_SUFFIX = SHAPES + "\n\ndef total_area(shapes):\n", ""  # a body to write: lines that stream


@pytest.fixture(scope="module")
def client():
    # No keys/values kept across requests: with int8 linear layers an activation's scale is the
    # whole call's, so a canvas whose start is reused computes the rest at other scales and an
    # answer near a tie may change (`infill/quantize.py`); the same request must answer the same here.
    server = Gateway(["--deadline-ms", "30000", "--threads", "1", "--prefix-cache-mb", "0"], startup_s=240)
    try:
        yield openai.OpenAI(base_url=server.url + "/v1", api_key="unused", max_retries=0, timeout=120)
    finally:
        server.stop()


def complete(client, **fields):
    return client.completions.create(model=client.models.list().data[0].id, **fields)


def test_a_completion_with_a_suffix_and_its_stream(client):
    whole = complete(client, prompt=PREFIX, suffix=SUFFIX, max_tokens=32)
    text = whole.choices[0].text
    assert text.strip() and whole.object == "text_completion" and "\n" not in text
    chunks = list(complete(client, prompt=PREFIX, suffix=SUFFIX, max_tokens=32, stream=True,
                           stream_options={"include_usage": True}))
    assert chunks[-1].choices == [] and chunks[-1].usage.total_tokens > 0
    assert "".join(c.choices[0].text for c in chunks[:-1]) == text
    assert chunks[-2].choices[0].finish_reason in ("stop", "length")


def test_a_multi_line_stream_adds_up_to_the_unstreamed_answer(client):
    text = complete(client, prompt=BODY_PREFIX, max_tokens=64).choices[0].text
    chunks = list(complete(client, prompt=BODY_PREFIX, max_tokens=64, stream=True))
    assert len(chunks) >= 2 and chunks[-1].choices[0].finish_reason in ("stop", "length")
    assert "".join(c.choices[0].text for c in chunks) == text


def test_n_choices_and_a_stop_sequence(client):
    two = complete(client, prompt=BODY_PREFIX, suffix=BODY_SUFFIX, max_tokens=48, n=2)
    assert [choice.index for choice in two.choices] == [0, 1]
    text = complete(client, prompt=PREFIX, suffix=SUFFIX, max_tokens=32).choices[0].text
    stop = text.strip()[1:3]
    cut = complete(client, prompt=PREFIX, suffix=SUFFIX, max_tokens=32, stop=[stop]).choices[0]
    assert cut.text == text[:text.index(stop)] and cut.finish_reason == "stop"


def test_the_sdk_raises_the_gateways_errors(client):
    with pytest.raises(openai.NotFoundError) as unknown:
        client.completions.create(model="gpt-4o", prompt=PREFIX)
    assert unknown.value.body["code"] == "model_not_found"
    with pytest.raises(openai.BadRequestError) as negative:
        complete(client, prompt=PREFIX, max_tokens=-5)
    assert negative.value.body["param"] == "max_tokens"
    assert complete(client, prompt=PREFIX, suffix=SUFFIX, max_tokens=8).choices[0].text is not None
