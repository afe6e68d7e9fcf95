#!/usr/bin/env python3
"""Calls POST /v1/risk/evaluate from a Python backend (Python 3.8 or newer; standard library only).

    RISK_API_URL=http://localhost:3000 RISK_API_KEY=$(cat .dev-api-key) \\
        python3 examples/python/evaluate.py 81.2.69.160 jane.doe@example.com [event_type]

Prints the recommended action and why; exits 0 on an answer, 1 on a refusal (a problem from the
service), 2 when the service could not be reached in time.
"""
import json
import os
import sys
import urllib.error
import urllib.request
import uuid


class Refused(Exception):
    """The service answered with an application/problem+json body (bad field, bad key, rate limited...)."""

    def __init__(self, problem, retry_after=None):
        super().__init__(f"{problem.get('status')} {problem.get('code')}: {problem.get('detail')}")
        self.problem = problem
        self.retry_after = retry_after


def evaluate(event, base_url, api_key, timeout=3.0, request_id=None):
    """Scores one event and returns the evaluation, or raises Refused (or an OSError when unreachable)."""
    request = urllib.request.Request(
        base_url.rstrip("/") + "/v1/risk/evaluate",
        data=json.dumps(event).encode("utf-8"),
        method="POST",
        headers={
            "Authorization": f"Bearer {api_key}",
            "Content-Type": "application/json",
            # Your id for this call: echoed back, in the service's log line, and in any problem's `instance`.
            "X-Request-Id": request_id or str(uuid.uuid4()),
        },
    )
    try:
        # The service answers in milliseconds; do not let a network problem hold your sign-up.
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return json.load(response)
    except urllib.error.HTTPError as error:
        with error:
            problem = json.load(error)
        raise Refused(problem, error.headers.get("Retry-After")) from None


def main(argv):
    api_key = os.environ.get("RISK_API_KEY")
    if len(argv) < 2 or not api_key:
        print("usage: RISK_API_KEY=... [RISK_API_URL=http://localhost:3000] evaluate.py <ip> <email> [event_type]", file=sys.stderr)
        return 2
    ip, email = argv[0], argv[1]
    event_type = argv[2] if len(argv) > 2 else "account_register"
    request_id = str(uuid.uuid4())
    try:
        evaluation = evaluate(
            {"ip": ip, "email": email, "event_type": event_type},
            os.environ.get("RISK_API_URL", "http://localhost:3000"),
            api_key,
            request_id=request_id,
        )
    except Refused as refused:
        print(f"refused: {refused}", file=sys.stderr)
        for field in refused.problem.get("errors", []):
            print(f"  {field['path']}: {field['message']}", file=sys.stderr)
        return 1
    except OSError as error:
        # Unreachable or too slow: your backend decides what that means. Many fall back to "review".
        print(f"no answer (request {request_id}): {error}", file=sys.stderr)
        return 2
    score = evaluation["score"]
    print(f"{score['state']}: fraud score {score['fraud_score']} (evaluation {evaluation['id']}, request {request_id})")
    for rule in score["details"]:
        print(f"  +{rule['score']} {rule['rule_name']}")
    # A check that could not run is not a clean result: it is named here, and no rule fired on it.
    if evaluation["unavailable"]:
        print(f"  could not check: {', '.join(evaluation['unavailable'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
