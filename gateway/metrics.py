"""The gateway's counters, written in the Prometheus text format (`GET /metrics`).

Requests and errors by route and status, a latency histogram by route, the characters of text
answered (the gateway does not tokenize: the worker owns the tokenizer), the streams open now,
the workers up and the requests cancelled because their client left. Counts live in memory from
the start of the process, as vLLM's and llama.cpp's do.
"""
from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Callable

LATENCY_BUCKETS_S = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
PREFIX = "infill_gateway"


class Metrics:
    def __init__(self) -> None:
        self.requests: Counter[tuple[str, int]] = Counter()  # (route, status)
        self.latency_counts: dict[str, list[int]] = {}  # route -> count per bucket (and +Inf)
        self.latency_sum_s: Counter[str] = Counter()
        self.completion_chars = 0
        self.live_streams = 0
        self.peak_streams = 0  # the most event streams open at once since the start
        self.client_gone = 0  # requests and streams cancelled at the worker when their client left

    def stream_opened(self) -> None:
        self.live_streams += 1
        self.peak_streams = max(self.peak_streams, self.live_streams)

    def observe(self, route: str, status: int, seconds: float) -> None:
        self.requests[(route, status)] += 1
        counts = self.latency_counts.setdefault(route, [0] * (len(LATENCY_BUCKETS_S) + 1))
        counts[bisect.bisect_left(LATENCY_BUCKETS_S, seconds)] += 1
        self.latency_sum_s[route] += seconds

    def render(self, workers: int, workers_up: Callable[[], int]) -> str:
        """The metrics page; `workers_up` is asked now."""
        lines = _family("requests_total", "counter", "HTTP requests answered, by route and status")
        lines += [f'{PREFIX}_requests_total{{route="{r}",status="{s}"}} {n}'
                  for (r, s), n in sorted(self.requests.items())]
        lines += _family("errors_total", "counter", "requests answered with a 4xx or 5xx status")
        lines += [f'{PREFIX}_errors_total{{route="{r}",status="{s}"}} {n}'
                  for (r, s), n in sorted(self.requests.items()) if s >= 400]
        lines += _family("request_seconds", "histogram", "time from request to the end of its answer")
        for route, counts in sorted(self.latency_counts.items()):
            lines += _histogram(route, counts, self.latency_sum_s[route])
        lines += _family("completion_chars_total", "counter", "characters of completion text answered")
        lines.append(f"{PREFIX}_completion_chars_total {self.completion_chars}")
        lines += _family("client_gone_total", "counter",
                         "requests cancelled at the worker because their client disconnected")
        lines.append(f"{PREFIX}_client_gone_total {self.client_gone}")
        lines += _family("live_streams", "gauge", "event streams open now")
        lines.append(f"{PREFIX}_live_streams {self.live_streams}")
        lines += _family("peak_streams", "gauge", "the most event streams open at once")
        lines.append(f"{PREFIX}_peak_streams {self.peak_streams}")
        lines += _family("workers", "gauge", "workers the gateway balances over")
        lines.append(f"{PREFIX}_workers {workers}")
        lines += _family("workers_up", "gauge", "workers that answer their health checks")
        lines.append(f"{PREFIX}_workers_up {workers_up()}")
        return "\n".join(lines) + "\n"


def _family(name: str, kind: str, help_text: str) -> list[str]:
    return [f"# HELP {PREFIX}_{name} {help_text}", f"# TYPE {PREFIX}_{name} {kind}"]


def _histogram(route: str, counts: list[int], total_s: float) -> list[str]:
    lines, running = [], 0
    for bound, count in zip((*map(str, LATENCY_BUCKETS_S), "+Inf"), counts):
        running += count
        lines.append(f'{PREFIX}_request_seconds_bucket{{route="{route}",le="{bound}"}} {running}')
    lines.append(f'{PREFIX}_request_seconds_sum{{route="{route}"}} {total_s:.6f}')
    lines.append(f'{PREFIX}_request_seconds_count{{route="{route}"}} {running}')
    return lines
