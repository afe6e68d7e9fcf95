"""A webhook receiver that checks the service's signature (Standard Webhooks: webhook-id,
webhook-timestamp, webhook-signature "v1,<base64 HMAC-SHA256>"). Python 3.8+, standard library only.

    WEBHOOK_SECRET=whsec_... PORT=8080 python3 examples/python/webhook_receiver.py
"""
import base64
import hashlib
import hmac
import json
import os
import time
from http.server import BaseHTTPRequestHandler, HTTPServer

TOLERANCE_SECONDS = 5 * 60  # an older delivery is refused: a replayed capture, not a retry


def verify_webhook(secret, headers, body, now=None):
    """True when any signature in the header is the secret's over f"{id}.{timestamp}.{body}"."""
    msg_id = headers.get("webhook-id")
    timestamp = headers.get("webhook-timestamp")
    signatures = headers.get("webhook-signature")
    if not msg_id or not signatures or not timestamp or not timestamp.isdigit():
        return False
    if abs((now or time.time()) - int(timestamp)) > TOLERANCE_SECONDS:
        return False
    key = base64.b64decode(secret[len("whsec_"):] if secret.startswith("whsec_") else secret)
    digest = hmac.new(key, f"{msg_id}.{timestamp}.".encode() + body, hashlib.sha256).digest()
    expected = "v1," + base64.b64encode(digest).decode()
    # Two signatures while the secret is rotated: either one is enough.
    return any(hmac.compare_digest(s, expected) for s in signatures.split(" "))


class Receiver(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length", 0)))  # the exact bytes, before parsing
        if not verify_webhook(os.environ["WEBHOOK_SECRET"], self.headers, body):
            self.send_response(400)
            self.end_headers()
            return
        event = json.loads(body)
        print(f"verified {event['type']} {self.headers['webhook-id']}", flush=True)
        self.send_response(204)  # answer fast; do the work after
        self.end_headers()

    def log_message(self, *args):
        pass


if __name__ == "__main__":
    server = HTTPServer(("127.0.0.1", int(os.environ.get("PORT", "8080"))), Receiver)
    print("listening", flush=True)
    server.serve_forever()
