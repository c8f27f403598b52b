-- Shared waiting and typing of the headless Neovim test scripts, which run inside a coroutine:
-- `dofile(".../helpers.lua")(wait_ms)` gives check, sleep, wait_until (failing after `wait_ms`)
-- and type_keys.
return function(wait_ms)
  local h = {}

  function h.check(condition, message)
    if not condition then
      error(message, 2)
    end
  end

  function h.sleep(ms)
    local co = coroutine.running()
    vim.defer_fn(function() assert(coroutine.resume(co)) end, ms)
    coroutine.yield()
  end

  function h.wait_until(condition, message)
    local waited = 0
    while not condition() do
      h.check(waited < wait_ms, message)
      h.sleep(20)
      waited = waited + 20
    end
  end

  -- Feed `keys` as typed and return once Neovim has read them all. The main loop runs typeahead,
  -- and the autocommands it triggers, before any timer resumes this coroutine: what the keys do at
  -- once is done on return; what comes later (a server's answer) needs wait_until.
  function h.type_keys(keys)
    vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(keys, true, true, true), "t", false)
    h.wait_until(function() return vim.fn.getchar(1) == 0 end, "Neovim did not read the keys " .. keys)
  end

  return h
end
