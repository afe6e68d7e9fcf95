import { readFileSync } from 'node:fs';

/** The service's version, from package.json: in the OpenAPI document and the admin API's health. */
export const version: string = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version;
