"""A Copilot-Arena-style A/B harness: backends answer the same hole in random pairs, a judge picks,
and a Bradley-Terry fit ranks them (`python -m bench.arena`; see bench/arena/README.md).

`config` reads the TOML file of backends, `backends` asks a worker or an OpenAI-compatible server,
`battles` draws and fights pairs, `judges` decides them (tests or reference), `run` runs every
task under every latency condition and tallies, `rating` fits the ranking, `leaderboard` shows it.
"""
