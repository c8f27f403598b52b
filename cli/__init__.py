"""The `infill` command line, above every front end: the dispatcher (`main`) and the commands that
compose several packages (`run`: a worker, the language server and the gateway with a
self-check; `complete`: one completion of one file, through the FIM pipeline, as an editor would
show it). The other commands' code lives with what it serves (`lsp_server.main`,
`gateway.main`, `engine.worker.cli`, `training.*`) and is only dispatched from here.
May import every package; none imports this one.
"""
