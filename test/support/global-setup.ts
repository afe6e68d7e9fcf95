import type { TestProject } from 'vitest/node';
import { startPostgres } from './postgres.js';

/**
 * One throwaway PostgreSQL for the whole run (starting one takes seconds); each test file makes
 * its own databases on it (test/support/store.ts). Removed when the run ends.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const server = await startPostgres();
  project.provide('postgresAdminUrl', server.url());
  return () => server.close();
}

declare module 'vitest' {
  export interface ProvidedContext {
    postgresAdminUrl: string;
  }
}
