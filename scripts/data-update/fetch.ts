/** GET a URL into a buffer, or throw an error saying what went wrong and where. */
export async function download(url: string, timeoutMs: number, headers: Record<string, string> = {}): Promise<Buffer> {
  let response: Response;
  try {
    response = await fetch(url, { headers, signal: AbortSignal.timeout(timeoutMs), redirect: 'follow' });
  } catch (error) {
    const cause = (error as Error & { cause?: Error }).cause?.message;
    throw new Error(`${url}: ${(error as Error).message}${cause ? ` (${cause})` : ''}`);
  }
  if (!response.ok) {
    await response.body?.cancel();
    throw new Error(`${url}: HTTP ${response.status}`);
  }
  return Buffer.from(await response.arrayBuffer());
}
