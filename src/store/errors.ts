/**
 * A change the store refused, with a stable code the CLI prints and the admin API will map to a
 * status: `not_found` 404, `conflict` 409, `invalid` 400.
 */
export class StoreRequestError extends Error {
  override name = 'StoreRequestError';
  constructor(
    readonly code: 'not_found' | 'conflict' | 'invalid',
    message: string,
  ) {
    super(message);
  }
}
