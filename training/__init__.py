"""How models are made: the corpus (`corpus`, kept apart from evaluation data by `evalguard`), the
objectives (`noising` for masked diffusion; `infill.fim_ar`'s rearrangements for the
autoregressive twin), the training loop (`train`) and what each of its steps trains on
(`batches`), self-distillation (`distill`), training data laid out by the product's own rules
(`snippet_data`, read back without tree-sitter by `snippet_windows`: the language server's
snippets; `edit_synth`, `edit_kinds`, `edit_sites`: synthetic next edits; `edit_canvases`: their
canvases, as the product asks), held-out tasks
(`heldout`) and shipping a trained model (`bundle`).

May import: `infill` (model, tokenizer, canvas, decoder), the completion rules (`completion`, so
that training data is laid out exactly as requests are) and `engine` (the worker's reading of a
request). Nothing of the front ends (`lsp_server`, `gateway`, `bench`), and nothing that serves
imports this package: not `infill`, `engine` or `completion` (`tests/test_completion_layers.py`
checks both directions). `infill corpus`, `infill train` and `infill distill` run its modules.
"""
