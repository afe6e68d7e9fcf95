import { buildSdk } from '../../scripts/build-sdk.js';

/**
 * Builds the device SDK into sdk/dist before any test runs, as `npm run build` does: the app serves
 * it (src/http/routes/sdk.ts) and the browser tests load it. A clean clone has no build yet.
 */
export default async function setup(): Promise<void> {
  await buildSdk();
}
