"""Inputs of a generation, shaped like ExecuTorch's (executorch.extension.llm.runner): text, token
ids and the image container. etrt.llm runs text-only programs, so TextLLMRunner takes text; these
containers exist so code written against ExecuTorch's input helpers builds its inputs unchanged."""
from __future__ import annotations

from typing import List, Optional, Sequence, Union

import numpy as np

__all__ = ["Image", "MultimodalInput", "make_text_input", "make_token_input", "make_image_input"]

_REPR_TEXT_LIMIT = 50


class Image:
    """Pixels in channel-major order (C, H, W), uint8 or float32, as ExecuTorch's Image holds them."""

    def __init__(self, data: Optional[Sequence[Union[int, float]]] = None, width: int = 0, height: int = 0,
                 channels: int = 0):
        values = list(data) if data is not None else []
        if len(values) != width * height * channels:
            raise RuntimeError(f"Image: {len(values)} values for width {width} x height {height} x "
                               f"channels {channels} = {width * height * channels}")
        self._is_float = any(isinstance(v, float) for v in values)
        if not self._is_float and any(not 0 <= int(v) <= 255 for v in values):
            raise RuntimeError("Image: uint8 data must lie in [0, 255]")
        self._data = [float(v) for v in values] if self._is_float else [int(v) for v in values]
        self._width, self._height, self._channels = int(width), int(height), int(channels)

    def is_uint8(self) -> bool:
        return not self._is_float

    def is_float(self) -> bool:
        return self._is_float

    @property
    def width(self) -> int:
        return self._width

    @property
    def height(self) -> int:
        return self._height

    @property
    def channels(self) -> int:
        return self._channels

    @property
    def uint8_data(self) -> List[int]:
        return list(self._data) if not self._is_float else []

    @property
    def float_data(self) -> List[float]:
        return list(self._data) if self._is_float else []

    def __repr__(self) -> str:
        dtype = "float32" if self._is_float else "uint8"
        return f"<Image height={self._height} width={self._width} channels={self._channels} dtype={dtype}>"


class MultimodalInput:
    """One input of a generation: a text, a list of token ids or an Image."""

    def __init__(self, value: Union[str, Image, Sequence[int]]):
        if isinstance(value, str):
            self._kind = "text"
        elif isinstance(value, Image):
            self._kind = "image"
        elif isinstance(value, (list, tuple)) and all(isinstance(v, int) for v in value):
            self._kind, value = "tokens", [int(v) for v in value]
        else:
            raise TypeError(f"MultimodalInput takes a str, an Image or a list of token ids, got {type(value).__name__}")
        self._value = value

    def is_text(self) -> bool:
        return self._kind == "text"

    def is_tokens(self) -> bool:
        return self._kind == "tokens"

    def is_image(self) -> bool:
        return self._kind == "image"

    def is_audio(self) -> bool:
        return False

    def is_raw_audio(self) -> bool:
        return False

    def get_text(self) -> Optional[str]:
        return self._value if self._kind == "text" else None

    def get_tokens(self) -> Optional[List[int]]:
        return list(self._value) if self._kind == "tokens" else None

    def get_image(self) -> Optional[Image]:
        return self._value if self._kind == "image" else None

    def __repr__(self) -> str:
        if self._kind != "text":
            return f"<MultimodalInput type={self._kind}>"
        text = self._value if len(self._value) <= _REPR_TEXT_LIMIT else self._value[:_REPR_TEXT_LIMIT] + "..."
        return f'<MultimodalInput type=text content="{text}">'


def make_text_input(text: str) -> MultimodalInput:
    return MultimodalInput(text)


def make_token_input(token_ids: Sequence[int]) -> MultimodalInput:
    return MultimodalInput(list(token_ids))


def make_image_input(image_tensor) -> MultimodalInput:
    """An image input from a torch tensor or NumPy array of shape (C, H, W), (H, W, C), (1, C, H, W) or
    (1, H, W, C), with 3 (RGB) or 4 (RGBA) channels, uint8 or float32."""
    array = image_tensor.numpy() if hasattr(image_tensor, "numpy") else np.asarray(image_tensor)
    if array.ndim == 4:
        if array.shape[0] != 1:
            raise RuntimeError("Batch size for 4D image tensor must be 1")
        array = array[0]
    elif array.ndim != 3:
        raise RuntimeError("Image tensor must be 3-dimensional (H, W, C) or 4-dimensional (1, H, W, C)")
    if array.shape[0] in (3, 4):
        chw = array
    elif array.shape[-1] in (3, 4):
        chw = np.transpose(array, (2, 0, 1))
    else:
        raise RuntimeError("Image must have 3 (RGB) or 4 (RGBA) channels")
    if array.dtype == np.uint8:
        data = np.ascontiguousarray(chw).ravel().tolist()
    elif array.dtype == np.float32:
        data = [float(v) for v in np.ascontiguousarray(chw).ravel()]
    else:
        raise RuntimeError("Unsupported image tensor dtype. Only uint8 and float32 are supported.")
    channels, height, width = chw.shape
    return MultimodalInput(Image(data, width, height, channels))
