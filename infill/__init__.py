"""What serves the model: the transformer (`model`; `causal` decodes autoregressive checkpoints),
model folders and public checkpoint families (`checkpoint`, `families`, `family_tokens`,
`int8_store`, `quantize`, `weights`, `decoder_defaults`), the tokenizer, jobs and their canvas
(`job`, `canvas`, `fim`, and `fim_ar`'s prompt for a FIM-trained causal twin), and the denoising
decoder with its rules and kernels (`decode`, a package of one module per job, `batch`, `commit`,
`drafts`, `repetition`, `kernels`) and the one answer record of a hole (`answer`). `tiny` writes
tiny random checkpoints in each public layout for tests and install checks; `paths` says where
the bundled model and the work folder are; `cli` is the `infill` command, which imports a
command's module only when it runs.

May import: torch, numpy, numba, tokenizers, safetensors. Nothing of `engine`, `completion`, the
front ends (`lsp_server`, `gateway`, `bench`) or `training`: how models are made lives in
`training`, which builds on this package (`tests/test_completion_layers.py` checks it).
"""
