import { loadConfig } from '../config/config.js';
import { checkRuleDirectory } from '../rules/check.js';

/**
 * `npm run rules:check [dir]`: validates a rules directory (default RULES_DIR) the way the service
 * loads it, prints each file's result, and exits 1 on any problem, for users' own CI.
 */
const dir = process.argv[2] ?? loadConfig(process.env).rulesDir;
const { ok, lines } = await checkRuleDirectory(dir);
for (const line of lines) (line.startsWith('error') ? console.error : console.log)(line);
process.exitCode = ok ? 0 : 1;
