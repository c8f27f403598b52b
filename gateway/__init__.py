"""The HTTP gateway: the workers behind the APIs editor clients already speak (`infill gateway`).

OpenAI's `/v1/completions` (and DeepSeek's `/beta/completions`) with `suffix` or a FIM template in
`prompt`, the Mistral and Inception `/v1/fim/completions`, llama.cpp's `/infill` and `/health`,
Inception's next-edit `/v1/edit/completions`, `/v1/models` and Prometheus `/metrics`, on FastAPI
and uvicorn. Every completion runs the rules the language server and `infill complete` run
(`completion`), so the same text gets the same answer through all three.

`templates` splits FIM templates; `bodies` reads and checks each dialect's request body into an
`Ask`; `completer` asks the workers (`engine.client.pool`) and shapes the texts; `settle` says how much of
a streamed text is final; `shapes` writes each dialect's JSON and stream chunks; `edits` is the
next-edit endpoint; `errors` the OpenAI error objects; `api_keys` the bearer keys; `metrics` the
counters; `tasks` starts its tasks, each one's end looked at; `app` the routes; `main` the command line.
"""
