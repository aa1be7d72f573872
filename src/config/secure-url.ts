/** Spec §5: all requests use HTTPS. Plain HTTP is allowed only to this machine (the sandbox, tests). */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
}

/** Why a partner base URL is not acceptable, or undefined when it is. */
export function insecureUrlReason(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return `not a valid URL: ${JSON.stringify(url)}`;
  }
  if (parsed.protocol === 'https:') return undefined;
  if (parsed.protocol === 'http:' && isLoopbackHost(parsed.hostname)) return undefined;
  return `must use https:// (plain http is allowed only for localhost / 127.0.0.1 / ::1), got ${parsed.protocol}//${parsed.host}`;
}
