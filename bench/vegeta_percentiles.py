"""p50 and p99 (µs) of a `vegeta encode --to json` file, without the
results that started in the first WARMUP seconds, and the rate vegeta sent
at after them (req/s): vegeta_percentiles.py FILE WARMUP"""
import json
import sys
from datetime import datetime


def stamp(s):
    # RFC 3339 with nanoseconds; Python parses microseconds.
    head, _, rest = s.partition(".")
    frac = "".join(ch for ch in rest if ch.isdigit())[:6]
    zone = rest[len("".join(ch for ch in rest if ch.isdigit())):]
    return datetime.fromisoformat(f"{head}.{frac}{zone.replace('Z', '+00:00')}").timestamp()


rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
start = min(stamp(r["timestamp"]) for r in rows)
warmup = float(sys.argv[2])
measured = [r for r in rows if stamp(r["timestamp"]) >= start + warmup]
lat = sorted(r["latency"] / 1000.0 for r in measured if r["code"] == 200)
q = lambda p: lat[min(len(lat) - 1, int(p * len(lat)))]
sent = [stamp(r["timestamp"]) for r in measured]
rate = (len(sent) - 1) / (max(sent) - min(sent)) if len(sent) > 1 and max(sent) > min(sent) else 0.0
print(f"{q(0.5):.1f} {q(0.99):.1f} {rate:.0f}")
