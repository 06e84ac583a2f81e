"""etrt.llm: text generation with LLM programs, shaped like ``executorch.extension.llm.runner``::

    from etrt.llm import TextLLMRunner, GenerationConfig
    runner = TextLLMRunner("llama.pte", "tokenizer.model")          # or tokenizer.json, tiktoken, .bin
    runner.generate("Once upon a time", GenerationConfig(max_new_tokens=32, temperature=0),
                    token_callback=lambda text: print(text, end="", flush=True))

The runner is libetrt_llm (C++), a consumer of the same libetrt as ``import etrt``: its programs are
served by the plugins, registry and thread pool that ``etrt`` reports and configures. It runs
decoder-only text programs (ExecuTorch's export_llama layout); ExecuTorch's MultimodalRunner has no
counterpart here. See docs/LLM.md.
"""
from __future__ import annotations

from .._llm import GenerationConfig, Stats, TextLLMRunner
from ._inputs import Image, MultimodalInput, make_image_input, make_text_input, make_token_input

__all__ = ["GenerationConfig", "Stats", "TextLLMRunner", "Image", "MultimodalInput", "make_text_input",
           "make_token_input", "make_image_input", "generate_text"]


def generate_text(runner: TextLLMRunner, prompt: str, config: GenerationConfig) -> str:
    """Runs a generation and returns the text it streamed (the prompt too when config.echo)."""
    pieces = []
    runner.generate(prompt, config, pieces.append)
    return "".join(pieces)

