#!/usr/bin/env node
// Calls POST /v1/risk/evaluate from a Node.js backend (Node 18 or newer; no dependencies).
//
//   RISK_API_URL=http://localhost:3000 RISK_API_KEY=$(cat .dev-api-key) \
//     node examples/node/evaluate.mjs 81.2.69.160 jane.doe@example.com [event_type]
//
// Prints the recommended action and why; exits 0 on an answer, 1 on a refusal (a problem from the
// service), 2 when the service could not be reached in time.
import { randomUUID } from 'node:crypto';
import { pathToFileURL } from 'node:url';

/**
 * Scores one event. Resolves with the evaluation, or rejects with an error whose `problem` is the
 * service's application/problem+json body (bad field, bad key, rate limited...).
 */
export async function evaluate(event, { baseUrl, apiKey, timeoutMs = 3000, requestId = randomUUID() }) {
  const response = await fetch(new URL('/v1/risk/evaluate', baseUrl), {
    method: 'POST',
    headers: {
      authorization: `Bearer ${apiKey}`,
      'content-type': 'application/json',
      // Your id for this call: echoed back, in the service's log line, and in any problem's `instance`.
      'x-request-id': requestId,
    },
    body: JSON.stringify(event),
    // The service answers in milliseconds; do not let a network problem hold your sign-up.
    signal: AbortSignal.timeout(timeoutMs),
  });
  const body = await response.json();
  if (!response.ok) {
    const error = new Error(`${body.status} ${body.code}: ${body.detail}`);
    error.problem = body;
    error.retryAfterSeconds = Number(response.headers.get('retry-after')) || null;
    throw error;
  }
  return body;
}

async function main() {
  const [ip, email, eventType = 'account_register'] = process.argv.slice(2);
  const apiKey = process.env.RISK_API_KEY;
  if (!ip || !email || !apiKey) {
    console.error('usage: RISK_API_KEY=... [RISK_API_URL=http://localhost:3000] node evaluate.mjs <ip> <email> [event_type]');
    return 2;
  }
  const requestId = randomUUID();
  let evaluation;
  try {
    evaluation = await evaluate(
      { ip, email, event_type: eventType },
      { baseUrl: process.env.RISK_API_URL ?? 'http://localhost:3000', apiKey, requestId },
    );
  } catch (error) {
    if (error.problem) {
      console.error(`refused: ${error.message}`);
      for (const field of error.problem.errors ?? []) console.error(`  ${field.path}: ${field.message}`);
      return 1;
    }
    // Unreachable or too slow: your backend decides what that means. Many fall back to "review".
    console.error(`no answer (request ${requestId}): ${error.message}`);
    return 2;
  }
  const { score, id, unavailable } = evaluation;
  console.log(`${score.state}: fraud score ${score.fraud_score} (evaluation ${id}, request ${requestId})`);
  for (const rule of score.details) console.log(`  +${rule.score} ${rule.rule_name}`);
  // A check that could not run is not a clean result: it is named here, and no rule fired on it.
  if (unavailable.length > 0) console.log(`  could not check: ${unavailable.join(', ')}`);
  return 0;
}

// Run as a script, or import { evaluate } from your own code.
if (import.meta.url === pathToFileURL(process.argv[1]).href) process.exitCode = await main();
