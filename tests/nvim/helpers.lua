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

  function h.type_keys(keys)
    vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(keys, true, true, true), "t", false)
    h.sleep(50)
  end

  return h
end
