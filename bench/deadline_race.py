#!/usr/bin/env python3
"""Customers paying around their order's deadline at the dev mock gateway while the sweeper
cancels (SPEC §16), driven over loopback HTTP against one engine; called by bench/deadline_race.sh.

Each customer books one seat of its own (POST /api/orders), gets the payment created at the mock
gateway (POST /api/payments: its "pay" is the checkout URL) and pays at the mock's checkout at a
random moment within --spread-ms of the order's deadline. When the sweeper has cancelled an order,
a second customer books the same seat and pays at once: a late payment of the first one must then
never sell that seat twice. Bounded: every wait has a deadline and the run ends by itself. Prints
one JSON object of counts; the shell wrapper checks the stores.
"""
import argparse
import concurrent.futures
import json
import random
import threading
import time
import urllib.error
import urllib.request

TIMEOUT_S = 10


def call(base, method, path, token=None, body=None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(base + path, data=data, method=method)
    request.add_header("Content-Type", "application/json")
    if token:
        request.add_header("Authorization", "Bearer " + token)
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        text = error.read()
        try:
            return error.code, json.loads(text or b"null")
        except ValueError:
            return error.code, None


class Counts:
    def __init__(self):
        self.lock = threading.Lock()
        self.values = {}

    def add(self, name, n=1):
        with self.lock:
            self.values[name] = self.values.get(name, 0) + n


def book(base, token, run, name, seat, counts):
    order_no, payment_no = f"{run}-{name}-o", f"{run}-{name}"
    status, order = call(base, "POST", "/api/orders", token,
                         {"orderNo": order_no, "userId": name, "showId": f"{run}-show",
                          "seatIds": [seat], "amountCents": 5000})
    if status != 201:
        counts.add(f"order_{status}")
        return None
    status, payment = call(base, "POST", "/api/payments", token,
                           {"orderNo": order_no, "channel": "hmac", "paymentNo": payment_no})
    if status != 201 or not (payment or {}).get("pay"):
        counts.add(f"payment_{status}")
        return None
    return order_no, payment_no, payment["pay"]["payUrl"]


def pay(pay_url, counts, prefix):
    # The checkout page's own button: POST {payUrl}/pay {"success": true}.
    status, body = call(pay_url, "POST", "/pay", None, {"success": True})
    if status == 200:
        counts.add(prefix + "paid_at_gateway")
    else:
        counts.add(prefix + "refused_" + str((body or {}).get("error", status)))


def customer(args, index, counts):
    rng = random.Random(args.seed * 1_000_003 + index)
    seat = f"S{index}"
    booked = book(args.base, args.token, args.run, f"a{index}", seat, counts)
    if booked is None:
        return
    order_no, _payment_no, pay_url = booked
    status, order = call(args.base, "GET", "/api/orders/" + order_no, args.token)
    deadline_s = time.time() + args.timeout_ms / 1000.0
    if status == 200 and order.get("expiresAt"):
        deadline_s = parse_time(order["expiresAt"])
    offset_s = rng.uniform(-args.spread_ms, args.spread_ms) / 1000.0
    time.sleep(max(0.0, deadline_s + offset_s - time.time()))
    pay(pay_url, counts, "")
    # Once the sweeper has given the seat back, a second customer takes it and pays at once.
    give_up = time.time() + args.wait_s
    while time.time() < give_up:
        status, order = call(args.base, "GET", "/api/orders/" + order_no, args.token)
        if status == 200 and order.get("status") != "PENDING":
            break
        time.sleep(0.2)
    if status == 200 and order.get("status") == "CANCELLED":
        second = book(args.base, args.token, args.run, f"b{index}", seat, counts)
        if second is not None:
            pay(second[2], counts, "second_")


def parse_time(text):
    # PostgreSQL's JSON text of a timestamptz: 2026-12-08T01:02:03.456789+00:00
    from datetime import datetime
    return datetime.fromisoformat(text).timestamp()


def latency(args):
    """Sequential creates and closes, each timed: the gateway's round trips on the API's calls."""
    created, closed = [], []
    for i in range(args.latency):
        order_no, payment_no = f"{args.run}-l{i}-o", f"{args.run}-l{i}"
        status, _ = call(args.base, "POST", "/api/orders", args.token,
                         {"orderNo": order_no, "userId": "u", "showId": f"{args.run}-show",
                          "seatIds": [f"L{i}"], "amountCents": 5000})
        if status != 201:
            raise SystemExit(f"order answered {status}")
        started = time.perf_counter()
        status, _ = call(args.base, "POST", "/api/payments", args.token,
                         {"orderNo": order_no, "channel": "hmac", "paymentNo": payment_no})
        created.append(time.perf_counter() - started)
        if status != 201:
            raise SystemExit(f"payment answered {status}")
        started = time.perf_counter()
        status, _ = call(args.base, "POST", f"/api/payments/{payment_no}/close", args.token)
        closed.append(time.perf_counter() - started)
        if status != 200:
            raise SystemExit(f"close answered {status}")

    def quantiles(values):
        values = sorted(values)
        return {"p50_ms": round(values[len(values) // 2] * 1000, 2),
                "p99_ms": round(values[min(len(values) - 1, len(values) * 99 // 100)] * 1000, 2)}

    print(json.dumps({"create": quantiles(created), "close": quantiles(closed)}, sort_keys=True))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--base", required=True)
    parser.add_argument("--token", required=True)
    parser.add_argument("--run", required=True)
    parser.add_argument("--customers", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=50)
    parser.add_argument("--timeout-ms", type=int, default=3000)
    parser.add_argument("--spread-ms", type=int, default=1500)
    parser.add_argument("--wait-s", type=float, default=20.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--latency", type=int, default=0,
                        help="instead: time this many sequential creates and closes")
    args = parser.parse_args()
    if args.latency:
        latency(args)
        return
    counts = Counts()
    started = time.time()
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.concurrency) as pool:
        futures = [pool.submit(customer, args, i, counts) for i in range(args.customers)]
        for future in futures:
            future.result()
    counts.values["elapsed_s"] = round(time.time() - started, 1)
    print(json.dumps(counts.values, sort_keys=True))


if __name__ == "__main__":
    main()
