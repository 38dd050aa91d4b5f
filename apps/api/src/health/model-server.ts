/**
 * Whether a self-hosted OpenAI-compatible model server (OPENAI_BASE_URL) answers: GET its
 * `/models` within the time given. Any HTTP answer is `ok` (a key it wants, a path it lacks: the
 * worker's log and the boot warning say those); no answer, or none in time, is `down`.
 */
export async function probeModelServer(
  baseUrl: string,
  apiKey: string | undefined,
  timeoutMs = 1_000,
): Promise<'ok' | 'down'> {
  try {
    const res = await fetch(`${baseUrl.replace(/\/+$/, '')}/models`, {
      headers: apiKey ? { authorization: `Bearer ${apiKey}` } : {},
      signal: AbortSignal.timeout(timeoutMs),
    });
    await res.body?.cancel();
    return 'ok';
  } catch {
    return 'down';
  }
}
