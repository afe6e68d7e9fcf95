/**
 * Times between the console's `datetime-local` inputs (the browser's zone, no offset) and the API's
 * ISO-8601 instants. What does not read as a time is passed on as typed, for the API to name.
 */
export function localToIso(local: string): string {
  if (local === '') return local;
  const time = new Date(local);
  return /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/.test(local) && !Number.isNaN(time.getTime()) ? time.toISOString() : local;
}

/** An instant as a `datetime-local` value in the browser's zone ('' when it is not one). */
export function isoToLocal(iso: string): string {
  const time = new Date(iso);
  if (Number.isNaN(time.getTime())) return '';
  const local = new Date(time.getTime() - time.getTimezoneOffset() * 60_000);
  return local.toISOString().slice(0, 16);
}
