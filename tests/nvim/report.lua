-- Shared ending of the headless Neovim test scripts: write the outcome to $INFILL_RESULT as JSON
-- (with `ok`, and the error when the script failed) and quit, 0 when every check passed.
return function(ok, outcome)
  if not ok then
    outcome = { error = tostring(outcome) }
  end
  outcome.ok = ok
  local handle = assert(io.open(vim.env.INFILL_RESULT, "w"))
  handle:write(vim.fn.json_encode(outcome))
  handle:close()
  vim.cmd(ok and "qall!" or "cquit!")
end
