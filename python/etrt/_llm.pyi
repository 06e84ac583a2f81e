"""Types of etrt's LLM runner glue (python/src/llm_module.cpp); use etrt.llm."""
from typing import Any, Callable, Dict, List, Optional

# The runtime functions every glue module defines (python/src/glue.h), typed once in _etrt.pyi.
from ._etrt import (ENTRY_BACKEND as ENTRY_BACKEND, ENTRY_OPERATOR as ENTRY_OPERATOR, ENTRY_TRACER as ENTRY_TRACER,
                    add_manifest as add_manifest, load_all_plugins as load_all_plugins, load_plugin as load_plugin,
                    manifests as manifests, num_threads as num_threads, operator_is_builtin as operator_is_builtin,
                    plugins as plugins, registry as registry, registry_identity as registry_identity,
                    rejections as rejections, report_json as report_json, set_num_threads as set_num_threads,
                    threadpool_identity as threadpool_identity, version as version)

class GenerationConfig:
    echo: bool
    max_new_tokens: int
    warming: bool
    seq_len: int
    temperature: float
    num_bos: int
    num_eos: int
    top_k: int
    top_p: float
    seed: Optional[int]
    def __init__(self, *, echo: bool = True, max_new_tokens: int = -1, warming: bool = False, seq_len: int = -1,
                 temperature: float = 0.8, num_bos: int = 0, num_eos: int = 0, top_k: int = 0, top_p: float = 1.0,
                 seed: Optional[int] = None) -> None: ...
    def resolve_max_new_tokens(self, max_context_len: int, num_tokens_occupied: int) -> int: ...

class Stats:
    SCALING_FACTOR_UNITS_PER_SECOND: int
    model_load_start_ms: int
    model_load_end_ms: int
    inference_start_ms: int
    token_encode_end_ms: int
    prompt_eval_end_ms: int
    first_token_ms: int
    inference_end_ms: int
    aggregate_sampling_time_ms: int
    num_prompt_tokens: int
    num_generated_tokens: int
    def __init__(self) -> None: ...
    def reset(self, all_stats: bool = False) -> None: ...
    def to_json_string(self) -> str: ...

class TextLLMRunner:
    stats: Stats
    position: int
    generated_tokens: List[int]
    metadata: Dict[str, Any]
    def __init__(self, model_path: str, tokenizer_path: str, data_path: Optional[str] = None) -> None: ...
    def generate(self, prompt: str, config: GenerationConfig, token_callback: Optional[Callable[[str], None]] = None,
                 stats_callback: Optional[Callable[[Stats], None]] = None) -> None: ...
    def prefill(self, prompt: str, config: GenerationConfig = ...) -> None: ...
    def stop(self) -> None: ...
    def reset(self) -> None: ...
    def load(self) -> None: ...
    def is_loaded(self) -> bool: ...
    def warmup(self, prompt: str, max_new_tokens: int = 15) -> None: ...
    def get_vocab_size(self) -> int: ...
    def encode(self, text: str, bos: int = 0, eos: int = 0) -> List[int]: ...
    def decode(self, ids: List[int]) -> str: ...
