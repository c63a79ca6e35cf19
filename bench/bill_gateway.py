#!/usr/bin/env python3
"""The bill bench's gateway: writes the hmac bill of ROWS payments (ids as bench/bill_seed.sql makes
them) to a file and serves it as the hmac gateway does (SPEC §13): GET /api/gateway/bills/DATE →
200 text/csv, X-Bill-Signature = hex HMAC-SHA256 of the body under the secret. Loopback only; it
serves until it is killed (bench/bill.sh stops it).

usage: bill_gateway.py --rows N --run PREFIX --date YYYY-MM-DD --mismatches M --secret-env VAR
                       --csv PATH --port-file PATH
"""
import argparse
import hashlib
import hmac
import http.server
import os


def write_bill(path, rows, run, date, mismatches):
    with open(path, "w", encoding="ascii", newline="") as out:
        out.write("tradeNo,paymentNo,type,amountCents,completedAt\n")
        for i in range(rows):
            amount = 5001 if i >= rows - mismatches else 5000
            out.write(f"T{run}-{i},P{run}-{i},payment,{amount},{date}T02:00:00Z\n")


def main():
    parser = argparse.ArgumentParser()
    for name in ("--rows", "--mismatches"):
        parser.add_argument(name, type=int, required=True)
    for name in ("--run", "--date", "--secret-env", "--csv", "--port-file"):
        parser.add_argument(name, required=True)
    args = parser.parse_args()
    write_bill(args.csv, args.rows, args.run, args.date, args.mismatches)
    with open(args.csv, "rb") as bill:
        body = bill.read()
    secret = os.environ[args.secret_env].split(",")[0].encode()
    signature = hmac.new(secret, body, hashlib.sha256).hexdigest()
    path = "/api/gateway/bills/" + args.date

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (the standard library's name)
            if self.path != path:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/csv")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("X-Bill-Signature", signature)
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    with open(args.port_file + ".tmp", "w", encoding="ascii") as port:
        port.write(str(server.server_address[1]))
    os.replace(args.port_file + ".tmp", args.port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()
