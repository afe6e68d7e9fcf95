/**
 * The integration: what a sign-up backend does before it creates an account (spec §1.9). It sends
 * the evaluation instead of creating the account directly, then approves, holds for review or
 * blocks. The README shows this same code as plain JavaScript.
 */

export interface SignupForm {
  email: string;
  first_name?: string;
  last_name?: string;
  /** What the page's `RiskDevice.collect()` returned, as JSON; absent when the SDK did not load. */
  device_intelligence?: string;
}

export interface Evaluation {
  score: { fraud_score: number; state: 'approve' | 'review' | 'decline'; details: { rule_name: string; score: number }[] };
  signals: string[];
  unavailable: string[];
}

export type SignupDecision =
  | { outcome: 'evaluated'; evaluation: Evaluation; device: Record<string, unknown> | undefined }
  | { outcome: 'refused'; problem: { detail: string; errors?: { path: string; message: string }[] } }
  | { outcome: 'unavailable'; reason: string };

const DEVICE_FIELDS = ['device_hash', 'device_os', 'device_model', 'browser_hash', 'browser_name', 'browser_version', 'cookie_enabled'];

/** The SDK's fields from the posted form, and nothing else: the page is the client's, not ours. */
function deviceFrom(json: string | undefined): Record<string, unknown> | undefined {
  try {
    const posted = JSON.parse(json ?? '');
    const device = Object.fromEntries(DEVICE_FIELDS.filter((key) => key in posted).map((key) => [key, posted[key]]));
    return Object.keys(device).length > 0 ? device : undefined;
  } catch {
    return undefined;
  }
}

export async function evaluateSignup(
  service: { url: string; apiKey: string },
  form: SignupForm,
  clientIp: string,
): Promise<SignupDecision> {
  const device = deviceFrom(form.device_intelligence);
  let response: Response;
  try {
    response = await fetch(`${service.url}/v1/risk/evaluate`, {
      method: 'POST',
      headers: { authorization: `Bearer ${service.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        ip: clientIp,
        email: form.email,
        event_type: 'account_register',
        user: { first_name: form.first_name || undefined, last_name: form.last_name || undefined },
        device_intelligence: device,
      }),
      // The service answers in milliseconds; past this the sign-up is held rather than kept waiting.
      signal: AbortSignal.timeout(3000),
    });
  } catch (error) {
    return { outcome: 'unavailable', reason: error instanceof Error ? error.message : String(error) };
  }
  if (response.status === 400) return { outcome: 'refused', problem: (await response.json()) as { detail: string; errors?: { path: string; message: string }[] } };
  if (!response.ok) return { outcome: 'unavailable', reason: `the risk service answered ${response.status}` };
  return { outcome: 'evaluated', evaluation: (await response.json()) as Evaluation, device };
}
