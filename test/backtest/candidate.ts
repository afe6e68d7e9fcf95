import { readFileSync } from 'node:fs';

/** The shipped registration rules (what live decided with in these tests), and a candidate that adds one rule to them. */
export const LIVE_RULES = readFileSync('rules/account_register.yaml', 'utf8');

/** The live file plus one rule: sign-ups from example.org decline (40). */
export const WITH_EXAMPLE_ORG_RULE = `${LIVE_RULES}
  - id: example_org
    name: Sign-up from example.org
    score: 40
    when: { field: email.domain, equals: example.org }
`;
