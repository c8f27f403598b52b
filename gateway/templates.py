"""FIM templates inside a prompt: several clients render one into `prompt` and send no `suffix`.

Continue's openai, vllm and llama.cpp providers, Twinny and llm-ls write the prefix and suffix
between a model family's sentinels; `split_template` finds the StarCoder, Qwen, CodeLlama or
DeepSeek sentinels (`upstream.templates`, shared with the clients that write them) and returns
the prefix and suffix they mark, in either order the templates use (prefix-suffix-middle, or
suffix-prefix-middle). A prompt without them is all prefix. Pure.
"""
from __future__ import annotations

from upstream.templates import TEMPLATES, Template


def split_template(prompt: str) -> tuple[str, str, str | None]:
    """(prefix, suffix, template name) of a prompt; (prompt, "", None) when it has no template.
    What stands before the first sentinel (a file-name comment, a repository header) is kept in
    front of the prefix; CodeLlama's spaces (`<PRE> prefix <SUF>suffix <MID>`) go."""
    for template in TEMPLATES:
        found = _split(prompt, template)
        if found is not None:
            return found[0], found[1], template.name
    return prompt, "", None


def _split(prompt: str, t: Template) -> tuple[str, str] | None:
    """For DeepSeek the sentinels are begin, hole, end: the prefix, then the suffix."""
    p, s, m = prompt.find(t.prefix), prompt.find(t.suffix), prompt.rfind(t.middle)
    if min(p, s, m) < 0 or m < max(p, s):
        return None
    head = prompt[:min(p, s)]
    if p < s:  # prefix, suffix, middle
        prefix, suffix = prompt[p + len(t.prefix):s], prompt[s + len(t.suffix):m]
    else:  # suffix, prefix, middle (StarCoder's and Qwen's "SPM" order)
        suffix, prefix = prompt[s + len(t.suffix):p], prompt[p + len(t.prefix):m]
    if t.name == "codellama":
        prefix, suffix = prefix.removeprefix(" ").removesuffix(" "), suffix.removesuffix(" ")
    return head + prefix, suffix
